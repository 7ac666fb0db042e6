import Foundation
import PrefsKit

/// A replica's side of a batch: its local changes go to the outbox in their own transaction, and
/// what its upstream answers is taken in — results, a snapshot, the upstream's changes — as
/// changes of the replica's own, without the rules the upstream applied already.
extension WriteBatch {
    // MARK: Local changes

    /// Throws `forbidden` if this replica's device may not make a change at `scope` (its grant,
    /// as the upstream said it). Nothing is checked for a store that is not a replica, for what
    /// the upstream sent, or before the upstream has said anything.
    func checkReplicaMayWrite(at scope: ScopePath) throws {
        guard let record = replica?.record, context.sync == nil, let role = record.role, let reach = record.scope else { return }
        let device = record.device.map { "'\($0)'" } ?? "this device"
        guard role >= .writer else {
            throw PrefsError(.forbidden, "The token of \(device) at the upstream may only read; the change was not made.")
        }
        guard reach.contains(scope) else {
            throw PrefsError(
                .forbidden,
                "The token of \(device) may write at \(reach.path) and below; \(scope.path) is outside it, so the change was not made."
            )
        }
    }

    /// Throws `forbidden` on a replica, for changes only its upstream makes (locks).
    func refuseOnReplica(_ what: String) throws {
        guard replica != nil, context.sync == nil else { return }
        throw PrefsError(.forbidden, "A replica takes its \(what) from its upstream: change it there.")
    }

    /// Adds a local change of `key` at `scope` (nil: a reset) to the outbox, made where the
    /// replica showed `shown` (nil: nothing); on a store that is not a replica, or for what the
    /// upstream sent, nothing.
    ///
    /// Its base is how far the replica had seen the entry when the change was made: every change
    /// up to its cursor (or up to the entry's revision it knows, if that is later — its own change,
    /// answered). The upstream applies the change if the entry has not changed since, and
    /// otherwise resolves it against the entry's last change — a deletion too, by its stamp. For
    /// a `union` key, its base value is what the replica showed, its own changes not yet answered
    /// included: what the change added and removed is measured from what the person saw (other
    /// rules need none, and none is stored or sent).
    func pushLater(_ key: String, at scope: ScopePath, value: JSONValue?, shown: JSONValue?) throws {
        // In place: a copy of the batch's changes would copy its outbox entries at every write.
        guard replica != nil, context.sync == nil else { return }
        let base = syncBase(of: SyncEntry(key: key, scope: scope))
        let mutation = SyncRequest.Mutation(
            seq: replica!.record.nextSequence, key: key, scope: scope, value: value,
            base: max(replica!.record.cursor, base?.revision ?? 0),
            baseValue: state(of: key)?.schema?.merge == .union ? shown : nil,
            stamp: replica!.clock.stamp(now: Int64(time * 1000)), ifAbsent: replica!.record.snapshotTaken ? nil : true,
            author: context.origin.author?.name, reason: context.origin.reason)
        try connection.appendOutbox(mutation)
        replica!.record.nextSequence += 1
        replica!.record.clock = replica!.clock.latest
        replica!.outboxAdded.append(mutation)
    }

    /// The upstream's entry as this batch sees it.
    func syncBase(of entry: SyncEntry) -> SyncBase? {
        if let changed = replica?.bases[entry] { return changed }
        return replicaState?.base(of: entry)
    }

    /// Keeps `base` (nil: none) as what the replica knows of the upstream's `entry`: in the
    /// batch's overlay, and in its transaction.
    private func keepBase(_ base: SyncBase?, for entry: SyncEntry) throws {
        replica!.bases[entry] = .some(base)
        try connection.storeSyncBase(base, for: entry)
    }

    /// How many outbox entries `entry` has, as this batch sees them.
    private func pendingCount(of entry: SyncEntry) -> Int {
        guard let changes = replica else { return 0 }
        let committed = replicaState?.pendingSequences(of: entry) ?? []
        let added = changes.outboxAdded.filter { $0.key == entry.key && $0.scope == entry.scope }.count
        return committed.subtracting(changes.outboxRemoved).count + added
    }

    // MARK: The upstream's answer

    /// Takes in the upstream's answer — the results of its pushed changes, a snapshot if one came,
    /// the upstream's changes after the cursor, and the drafts that changed after it. The bytes
    /// of its drafts' attachments stay on the upstream until they are read.
    ///
    /// An answer that arrives after the replica has taken in a later one (a late or repeated
    /// message) takes a result in only where it is newer than what the replica knows of the
    /// entry (the device is not sent its own values back: a result may be all it hears of one).
    /// Otherwise its results come first, then its snapshot and changes, which cover every other
    /// device's change after the request's cursor: whatever a result says, a later change of the
    /// same entry follows it.
    func takeIn(_ answer: SyncAnswer) throws {
        guard var changes = replica else { return }
        let late = answer.cursor < changes.record.cursor
        changes.record.device = answer.device
        changes.record.role = answer.role
        changes.record.scope = answer.scope
        replica = changes
        for result in answer.results {
            replica!.outboxRemoved.insert(result.seq)
            try connection.deleteOutbox(sequences: [result.seq])
            let entry = SyncEntry(key: result.key, scope: result.scope)
            let known = syncBase(of: entry)
            if result.revision > 0, !late || result.revision > known?.revision ?? 0 {
                let base = SyncBase(revision: result.revision, value: result.value)
                try keepBase(base, for: entry)
            } else if result.revision == 0, !late, let known, known.value != nil {
                // No value now, removed at a revision the result cannot name: after the one the
                // replica knows, which stays as the mark a late answer's older news is held to.
                let base = SyncBase(revision: known.revision, value: nil)
                try keepBase(base, for: entry)
            }
            try placeKnownValue(of: entry)
        }
        for result in answer.draftResults ?? [] { try takeIn(result) }
        if let snapshot = answer.snapshot, snapshot.revision > replica!.record.cursor {
            try takeIn(snapshot, reach: answer.scope)
            try takeIn(snapshotDrafts: snapshot.drafts, reach: answer.scope)
        }
        for change in answer.changes where change.revision > replica!.record.cursor {
            try takeIn(change)
            replica!.record.cursor = change.revision
        }
        // Drafts are sent as they are now: whatever the cursor, a later revision is news.
        for state in answer.drafts ?? [] { try takeIn(state) }
        replica!.record.cursor = max(replica!.record.cursor, answer.cursor)
        if replica!.needsSnapshot {
            replica!.record.cursor = 0
            replica!.needsSnapshot = false
        }
        replica!.record.clock = replica!.clock.latest
        try connection.storeReplicaRecord(replica!.record)
    }

    /// Makes the local value of `entry` the upstream's as last taken in, unless a local change of
    /// it is still to be pushed (that change keeps showing until its own answer comes).
    private func placeKnownValue(of entry: SyncEntry) throws {
        guard pendingCount(of: entry) == 0 else { return }
        try placeFromUpstream(syncBase(of: entry)?.value, key: entry.key, at: entry.scope)
    }

    /// Takes in the upstream's entry at `revision` (nil value: none) unless the replica knows a
    /// later one, and shows it unless a local change of it is still to be pushed.
    private func takeIn(entry: SyncEntry, revision: Revision, value: JSONValue?) throws {
        if let base = syncBase(of: entry), base.revision >= revision { return }
        let base = SyncBase(revision: revision, value: value)
        try keepBase(base, for: entry)
        try placeKnownValue(of: entry)
    }

    /// Takes in one of the upstream's changes.
    private func takeIn(_ change: SyncAnswer.Change) throws {
        if let stamp = change.stamp { replica!.clock.receive(stamp, now: Int64(time * 1000)) }
        switch (change.kind, change.scope) {
        case (.set, let scope?):
            try takeIn(entry: SyncEntry(key: change.key, scope: scope), revision: change.revision, value: change.value)
        case (.reset, let scope?):
            try takeIn(entry: SyncEntry(key: change.key, scope: scope), revision: change.revision, value: nil)
        case (.lock, let scope?):
            try placeLockFromUpstream(true, key: change.key, at: scope)
        case (.unlock, let scope?):
            try placeLockFromUpstream(false, key: change.key, at: scope)
        case (.schema, _):
            guard let value = change.value else { return }
            try placeSchemaFromUpstream(try PreferenceSchema(json: value.canonicalData), key: change.key)
        case (.conflict, _):
            guard let value = change.value else { return }
            let conflict = try WireJSON.decode(SyncConflict.self, from: value.canonicalData)
            try recordEvent(ChangeEvent(revision: 0, kind: .conflict, key: change.key, scope: change.scope, value: value))
            try connection.insertConflict(conflict)
            replica!.conflicts += 1
        default:
            break
        }
    }

    /// Makes the replica's entries within `reach` (at it, below and above it) those of
    /// `snapshot`, but for entries with local changes still to be pushed.
    private func takeIn(_ snapshot: SyncAnswer.Snapshot, reach: ScopePath) throws {
        func reaches(_ scope: ScopePath) -> Bool { reach.contains(scope) || scope.contains(reach) }
        let values = Dictionary(snapshot.values.map { (SyncEntry(key: $0.key, scope: $0.scope), $0) }, uniquingKeysWith: { $1 })
        let locks = Set(snapshot.locks.map { SyncEntry(key: $0.key, scope: $0.scope) })
        for (key, schema) in snapshot.schemas.sorted(by: { $0.key < $1.key }) {
            try placeSchemaFromUpstream(schema, key: key)
        }
        for (key, state) in allKeys().sorted(by: { $0.key < $1.key }) {
            for scope in state.locks.keys.sorted() where reaches(scope) && !locks.contains(SyncEntry(key: key, scope: scope)) {
                try placeLockFromUpstream(false, key: key, at: scope)
            }
            for scope in state.values.keys.sorted() where reaches(scope) && values[SyncEntry(key: key, scope: scope)] == nil {
                let entry = SyncEntry(key: key, scope: scope)
                try keepBase(nil, for: entry)
                if pendingCount(of: entry) == 0 { try placeFromUpstream(nil, key: key, at: scope) }
            }
        }
        for (entry, value) in values.sorted(by: { $0.key < $1.key }) {
            let base = SyncBase(revision: value.revision, value: value.value)
            try keepBase(base, for: entry)
            if pendingCount(of: entry) == 0 { try placeFromUpstream(value.value, key: entry.key, at: entry.scope) }
        }
        for lock in snapshot.locks {
            try placeLockFromUpstream(true, key: lock.key, at: lock.scope)
        }
        replica!.record.cursor = snapshot.revision
        replica!.record.snapshotTaken = true
    }

    // MARK: Placing what the upstream decided

    /// Makes the local value of `key` at `scope` `value` (nil: none), as the upstream has it.
    private func placeFromUpstream(_ value: JSONValue?, key: String, at scope: ScopePath) throws {
        let state = state(of: key)
        let stored = state?.values[scope]
        guard stored?.value != value else { return }
        if let value {
            let revision = try record(
                .set, key: key, scope: scope, value: value, oldValue: stored?.value.canonicalText, oldRevision: stored?.revision
            ) { state, revision in
                state.values[scope] = StoredValue(value: value, revision: revision)
            }
            try connection.upsertValue(key: key, scope: scope, value: value, revision: revision)
        } else {
            try record(.reset, key: key, scope: scope, oldValue: stored?.value.canonicalText, oldRevision: stored?.revision) {
                state, _ in state.values[scope] = nil
            }
            try connection.deleteValue(key: key, scope: scope)
        }
    }

    /// Locks or unlocks `key` at `scope`, as the upstream has it.
    private func placeLockFromUpstream(_ locked: Bool, key: String, at scope: ScopePath) throws {
        let lockedHere = state(of: key)?.locks[scope]
        switch (locked, lockedHere) {
        case (true, nil):
            let revision = try record(.lock, key: key, scope: scope) { state, revision in state.locks[scope] = revision }
            try connection.insertLock(key: key, scope: scope, revision: revision)
        case (false, let revision?):
            try record(.unlock, key: key, scope: scope, oldRevision: revision) { state, _ in state.locks[scope] = nil }
            try connection.deleteLock(key: key, scope: scope)
        default:
            break
        }
    }

    /// Registers `schema` for `key`, as the upstream has it.
    private func placeSchemaFromUpstream(_ schema: PreferenceSchema, key: String) throws {
        let state = state(of: key)
        guard state?.schema != schema else { return }
        let revision = try record(.schema, key: key, scope: nil, value: schema.jsonValue, oldValue: state?.schema?.canonicalText) {
            state, _ in state.schema = schema
        }
        try connection.upsertSchema(key: key, schema: schema, revision: revision)
    }
}
