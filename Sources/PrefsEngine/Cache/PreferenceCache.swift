import Synchronization
import PrefsKit

/// The committed state every read is served from: each key's ``KeyState`` and the revision it is
/// current as of. The writer replaces entries after each commit, before acknowledging it, so a
/// read after an acknowledged write always sees it; reads never run SQL.
///
/// Effective values are also memoised by key and scope, so a repeated read is two dictionary
/// lookups instead of a walk up the scope's ancestors; a commit forgets the memo of every key it
/// touched, under the same lock, so a memoised answer is never stale.
final class PreferenceCache: Sendable {
    struct Snapshot: Sendable {
        var keys: [String: KeyState]
        var revision: Revision
        var oldestRevision: Revision
    }

    /// An effective value as ``PreferenceResolver/effectiveValue(at:state:override:)`` gives it.
    typealias Effective = (value: JSONValue?, source: PreferenceSource)

    private struct State: ~Copyable {
        var snapshot: Snapshot
        /// Effective values by key, then scope (overrides excluded: they never change), each with
        /// the key's revision at that scope.
        var memo: [String: [ScopePath: (effective: Effective, revisionHere: Revision)]] = [:]
        var memoCount = 0
    }

    /// Past this many memoised answers the memo starts over, so reads at ever new scopes cannot
    /// grow it without bound.
    static let memoLimit = 65_536

    private let state: Mutex<State>

    init(keys: [String: KeyState], revision: Revision, oldestRevision: Revision) {
        state = Mutex(State(snapshot: Snapshot(keys: keys, revision: revision, oldestRevision: oldestRevision)))
    }

    /// The committed state of one key.
    func state(of key: String) -> KeyState? {
        state.withLock { $0.snapshot.keys[key] }
    }

    /// Runs `body` on a consistent view of the committed state.
    func read<T>(_ body: (borrowing Snapshot) throws -> T) rethrows -> T {
        try state.withLock { try body($0.snapshot) }
    }

    /// The effective value of `key` at `scope` (ignoring overrides), the key's revision at
    /// `scope` (``KeyState/revision(at:)``) and the revision they are current as of: memoised,
    /// else resolved from the key's state and remembered.
    func effectiveValue(of key: String, at scope: ScopePath)
        -> (effective: Effective, revisionHere: Revision, revision: Revision)
    {
        state.withLock { state in
            if let memo = state.memo[key]?[scope] { return (memo.effective, memo.revisionHere, state.snapshot.revision) }
            let keyState = state.snapshot.keys[key] ?? KeyState()
            let effective = PreferenceResolver.effectiveValue(at: scope, state: keyState, override: nil)
            let revisionHere = keyState.revision(at: scope)
            if state.memoCount >= Self.memoLimit {
                state.memo = [:]
                state.memoCount = 0
            }
            state.memo[key, default: [:]][scope] = (effective, revisionHere)
            state.memoCount += 1
            return (effective, revisionHere, state.snapshot.revision)
        }
    }

    /// Publishes a committed batch: the new states of the keys it touched, and its revision.
    func publish(_ states: [String: KeyState?], revision: Revision, oldestRevision: Revision) {
        state.withLock { state in
            for (key, keyState) in states {
                state.snapshot.keys[key] = keyState.flatMap { $0.isEmpty ? nil : $0 }
                if let forgotten = state.memo.removeValue(forKey: key) { state.memoCount -= forgotten.count }
            }
            state.snapshot.revision = revision
            state.snapshot.oldestRevision = oldestRevision
        }
    }
}
