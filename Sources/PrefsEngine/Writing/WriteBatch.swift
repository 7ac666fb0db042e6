import PrefsKit

/// A preference change as committed, with the key's state before and after it, for watchers
/// that follow effective values at a scope.
struct CommittedChange: Sendable {
    var event: ChangeEvent
    var before: KeyState?
    var after: KeyState?
}

/// What one group-commit batch works on: the storage's write connection with its open
/// transaction, the key states the batch has changed so far (an overlay on the committed cache),
/// and the revisions and changes it has produced.
///
/// Only the writer uses it, on the thread the storage lent its connection on, for the duration
/// of one transaction.
final class WriteBatch {
    /// The write connection, inside the batch's transaction.
    let connection: any WriteConnection
    /// The write rules (limits, strictness).
    let rules: PreferenceWriteRules
    /// The daemon's volatile overrides (they take part in resolving compose rules).
    let overrides: [String: JSONValue]
    /// Commit time, seconds since 1970.
    let time: Double
    /// The context of the request running now: every change it records carries its author and
    /// reason.
    var context = WriteContext()

    private let cache: PreferenceCache
    /// The named tokens as committed; the batch's own changes to them are in ``tokensChanged``.
    let tokens: AccessTokens
    /// The tokens this batch created (a token) or revoked (nil), by name.
    var tokensChanged: [String: StoredToken?] = [:]
    /// New states of the keys this batch changed (nil: nothing stored any more).
    private(set) var touched: [String: KeyState?] = [:]
    /// What each change of ``touched`` replaced, in order (the outer nil: the key was not in
    /// it): a ``Checkpoint`` is a count of these, so that taking one before every request copies
    /// nothing, and the next change does not copy the whole of ``touched`` either.
    private var touchedUndo: [(key: String, previous: KeyState??)] = []
    /// The revision of the batch's last change so far.
    private(set) var revision: Revision
    /// The oldest revision the change log holds once this batch commits.
    var oldestRevision: Revision
    /// The changes made so far, in revision order.
    private(set) var changes: [CommittedChange] = []
    /// The revision whose state the batch works on: its changes follow it.
    let baseRevision: Revision
    /// The replica's sync state as committed, where the engine is a replica of an upstream.
    let replicaState: SyncReplica?
    /// What the batch changes in the replica's sync state.
    var replica: ReplicaChanges?
    /// The rules of the conflicts the running request recorded (an upstream taking in a device's
    /// changes).
    var conflictRules: [SyncConflict.Rule] = []
    /// When a device changed each field of the draft the running request takes in: the stamps
    /// its versions keep (``DraftVersion``).
    var draftStamps: [DraftMerge.Field: SyncStamp] = [:]
    /// Whether the batch records the keys it reads (``keysRead``): only where other writers run
    /// alongside it.
    private let tracksKeysRead: Bool
    /// The keys whose state the batch's requests looked at (``state(of:)``), and whether they
    /// looked at every key (``allKeys()``): what no other writer may have changed meanwhile.
    private var keysLookedAt: Set<String> = []
    private var lookedAtAllKeys = false

    init(
        connection: any WriteConnection, cache: PreferenceCache, tokens: AccessTokens, rules: PreferenceWriteRules,
        overrides: [String: JSONValue], time: Double, tracksKeysRead: Bool, replica: SyncReplica? = nil
    ) {
        self.connection = connection
        self.tokens = tokens
        self.tracksKeysRead = tracksKeysRead
        self.cache = cache
        self.rules = rules
        self.overrides = overrides
        self.time = time
        (revision, oldestRevision) = cache.read { ($0.revision, $0.oldestRevision) }
        baseRevision = revision
        replicaState = replica
        self.replica = replica?.changes()
    }

    /// A key's state as this batch sees it: its own changes, else the committed state.
    func state(of key: String) -> KeyState? {
        if tracksKeysRead { keysLookedAt.insert(key) }
        if let state = touched[key] { return state }
        return cache.state(of: key)
    }

    /// Every key this batch would see, for operations that scan (dump, recursive reset).
    func allKeys() -> [String: KeyState] {
        lookedAtAllKeys = true
        var keys = cache.read { $0.keys }
        for (key, state) in touched { keys[key] = state }
        return keys
    }

    /// Records one preference change: gives it the next revision, appends it to the change log,
    /// applies `update` to the key's state, and re-validates the drafts a compose key governs.
    @discardableResult
    func record(
        _ kind: ChangeEvent.Kind, key: String, scope: ScopePath?, value: JSONValue? = nil, oldValue: String? = nil,
        oldRevision: Revision? = nil, update: (inout KeyState, Revision) -> Void
    ) throws -> Revision {
        let before = state(of: key)
        var after = before ?? KeyState()
        update(&after, revision + 1)
        let revision = try recordEvent(
            ChangeEvent(revision: 0, kind: kind, key: key, scope: scope, value: value), oldValue: oldValue,
            oldRevision: oldRevision, before: before, after: after)
        touchedUndo.append((key, touched.updateValue(after, forKey: key)))
        try revalidateDrafts(afterChangeOf: key, at: scope, before: before)
        return revision
    }

    /// Gives `event` the next revision, appends it to the change log and to this batch's changes.
    @discardableResult
    func recordEvent(
        _ event: ChangeEvent, oldValue: String? = nil, oldRevision: Revision? = nil, before: KeyState? = nil,
        after: KeyState? = nil
    ) throws -> Revision {
        revision += 1
        var event = event
        event.revision = revision
        let stamp: SyncStamp? = if case .device(let stamp) = context.sync { stamp } else { nil }
        try connection.appendChange(
            LoggedChange(
                event: event, oldValue: oldValue, oldRevision: oldRevision, time: time, author: context.origin.author,
                reason: context.origin.reason, stamp: stamp))
        changes.append(CommittedChange(event: event, before: before, after: after))
        return revision
    }

    /// Marks the batch as depending on every key, so that a storage where writers run side by
    /// side never moves its revisions past another writer's changes (it runs it again instead):
    /// for requests whose answers and records carry revisions a move would not reach.
    func dependsOnEverything() {
        lookedAtAllKeys = true
    }

    /// The keys the batch read (and so wrote): a storage that lets writers run side by side
    /// commits the batch after another's changes only if these are not among them.
    var keysRead: KeysRead {
        lookedAtAllKeys ? .all : .some(keysLookedAt)
    }

    /// Moves the batch's revisions up by `count`, once the storage has committed it after that
    /// many changes of other writers (``CommitRebase``), and returns the move, for the answers.
    func rebase(by count: Revision) -> RevisionShift {
        let shift = RevisionShift(base: baseRevision, shift: count)
        touched = touched.mapValues { $0?.shifted(shift) }
        touchedUndo = []
        changes = changes.map { $0.shifted(shift) }
        revision += count
        return shift
    }

    /// Where a failed request's changes are undone to.
    struct Checkpoint {
        fileprivate var touchedChanges: Int
        fileprivate var tokensChanged: [String: StoredToken?]
        fileprivate var revision: Revision
        fileprivate var changeCount: Int
        fileprivate var replica: ReplicaChanges.Mark?
    }

    func checkpoint() -> Checkpoint {
        Checkpoint(
            touchedChanges: touchedUndo.count, tokensChanged: tokensChanged, revision: revision, changeCount: changes.count,
            replica: replica?.mark)
    }

    /// Forgets everything done since `checkpoint` (the rows it changed, if any, are rolled back
    /// by the request's savepoint).
    func restore(_ checkpoint: Checkpoint) {
        while touchedUndo.count > checkpoint.touchedChanges, let (key, previous) = touchedUndo.popLast() {
            touched[key] = previous
        }
        tokensChanged = checkpoint.tokensChanged
        revision = checkpoint.revision
        changes.removeSubrange(checkpoint.changeCount...)
        if let mark = checkpoint.replica { replica?.restore(mark) }
    }
}
