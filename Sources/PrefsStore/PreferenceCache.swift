import Synchronization
import PrefsKit

/// The committed state every read is served from: each key's ``KeyState`` and the revision it is
/// current as of. The writer replaces entries after each commit, before acknowledging it, so a
/// read after an acknowledged write always sees it; reads never run SQL.
final class PreferenceCache: Sendable {
    struct Snapshot: Sendable {
        var keys: [String: KeyState]
        var revision: Revision
        var oldestRevision: Revision
    }

    private let snapshot: Mutex<Snapshot>

    init(keys: [String: KeyState], revision: Revision, oldestRevision: Revision) {
        snapshot = Mutex(Snapshot(keys: keys, revision: revision, oldestRevision: oldestRevision))
    }

    /// The committed state of one key.
    func state(of key: String) -> KeyState? {
        snapshot.withLock { $0.keys[key] }
    }

    /// Runs `body` on a consistent view of the committed state.
    func read<T>(_ body: (borrowing Snapshot) throws -> T) rethrows -> T {
        try snapshot.withLock { try body($0) }
    }

    /// Publishes a committed batch: the new states of the keys it touched, and its revision.
    func publish(_ states: [String: KeyState?], revision: Revision, oldestRevision: Revision) {
        snapshot.withLock { snapshot in
            for (key, state) in states {
                snapshot.keys[key] = state.flatMap { $0.isEmpty ? nil : $0 }
            }
            snapshot.revision = revision
            snapshot.oldestRevision = oldestRevision
        }
    }
}
