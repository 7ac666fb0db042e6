import Foundation
import PrefsKit

/// A replica's sync state as committed: what the engine keeps in memory of its record, outbox and
/// the upstream's entries, loaded from the storage at start and updated as batches commit.
struct ReplicaState: Sendable {
    /// The record.
    var record: ReplicaRecord
    /// The device's clock.
    var clock: HybridLogicalClock
    /// The outbox, by sequence number.
    var outbox: [Int64: SyncRequest.Mutation]
    /// The sequence numbers of each entry's outbox entries.
    var pending: [SyncEntry: Set<Int64>]
    /// The upstream's entries as last taken in.
    var bases: [SyncEntry: SyncBase]
    /// The draft outbox, by sequence number.
    var draftOutbox: [Int64: DraftMutation]
    /// The sequence numbers of each draft's outbox entries.
    var pendingDrafts: [UUID: Set<Int64>]
    /// The upstream's drafts as last taken in.
    var draftBases: [UUID: DraftBase]
    /// How many conflicts the replica has taken in since it started.
    var conflicts = 0

    /// The state a storage loaded, for a replica of `upstream`.
    init(_ snapshot: ReplicaSnapshot, upstream: String) {
        var record = snapshot.record ?? ReplicaRecord(upstream: upstream)
        let sameUpstream = record.upstream == upstream
        if !sameUpstream {
            // Another upstream: its revisions are not the old one's. Start again from its
            // snapshot; the outbox stays, to be pushed there.
            record = ReplicaRecord(upstream: upstream, clock: record.clock, nextSequence: record.nextSequence)
        }
        if let last = snapshot.outbox.last?.seq { record.nextSequence = max(record.nextSequence, last + 1) }
        if let last = snapshot.draftOutbox.last?.seq { record.nextSequence = max(record.nextSequence, last + 1) }
        let latest = ([record.clock].compactMap { $0 } + snapshot.outbox.map { $0.stamp } + snapshot.draftOutbox.map(\.stamp)).max()
        self.record = record
        clock = HybridLogicalClock(device: "", after: latest)
        outbox = Dictionary(uniqueKeysWithValues: snapshot.outbox.map { ($0.seq, $0) })
        pending = [:]
        for mutation in snapshot.outbox {
            pending[SyncEntry(key: mutation.key, scope: mutation.scope), default: []].insert(mutation.seq)
        }
        bases = sameUpstream ? snapshot.bases : [:]
        draftOutbox = Dictionary(uniqueKeysWithValues: snapshot.draftOutbox.map { ($0.seq, $0) })
        pendingDrafts = [:]
        for mutation in snapshot.draftOutbox { pendingDrafts[mutation.id, default: []].insert(mutation.seq) }
        draftBases = sameUpstream ? snapshot.draftBases : [:]
    }

    /// A batch's changes, once it has committed.
    mutating func apply(_ changes: ReplicaChanges) {
        record = changes.record
        clock = changes.clock
        for mutation in changes.outboxAdded {
            outbox[mutation.seq] = mutation
            pending[SyncEntry(key: mutation.key, scope: mutation.scope), default: []].insert(mutation.seq)
        }
        for mutation in changes.draftOutboxAdded {
            draftOutbox[mutation.seq] = mutation
            pendingDrafts[mutation.id, default: []].insert(mutation.seq)
        }
        for sequence in changes.outboxRemoved {
            if let mutation = draftOutbox.removeValue(forKey: sequence) {
                pendingDrafts[mutation.id]?.remove(sequence)
                if pendingDrafts[mutation.id]?.isEmpty == true { pendingDrafts[mutation.id] = nil }
            }
            guard let mutation = outbox.removeValue(forKey: sequence) else { continue }
            let entry = SyncEntry(key: mutation.key, scope: mutation.scope)
            pending[entry]?.remove(sequence)
            if pending[entry]?.isEmpty == true { pending[entry] = nil }
        }
        for (entry, base) in changes.bases { bases[entry] = base ?? nil }
        for (id, base) in changes.draftBases { draftBases[id] = base ?? nil }
        conflicts += changes.conflicts
    }

    /// The oldest outbox entries, at most `limit`, in sequence order.
    func nextMutations(limit: Int) -> [SyncRequest.Mutation] {
        outbox.keys.sorted().prefix(limit).map { outbox[$0]! }
    }

    /// The oldest outbox entry of each draft, at most `limit`, in sequence order: a draft's next
    /// change is rebased on the answer to the one before (``WriteBatch/takeIn(_:)``).
    func nextDraftMutations(limit: Int) -> [DraftMutation] {
        pendingDrafts.values.compactMap { $0.min() }.sorted().prefix(limit).map { draftOutbox[$0]! }
    }
}
