import Foundation
import PrefsKit

/// What one group-commit batch changes in a replica's sync state: its record, the outbox
/// entries it adds and removes, and the upstream's entries it takes in. An overlay on the
/// committed state (``ReplicaState``), published to it once the batch commits, so that nothing a
/// rolled-back batch did is ever pushed.
struct ReplicaChanges: Sendable {
    /// The replica's record as the batch leaves it.
    var record: ReplicaRecord
    /// The device's clock as the batch leaves it.
    var clock: HybridLogicalClock
    /// Outbox entries the batch added, in sequence order.
    var outboxAdded: [SyncRequest.Mutation] = []
    /// Sequence numbers of outbox entries the batch removed.
    var outboxRemoved: Set<Int64> = []
    /// The upstream's entries the batch took in (nil: removed).
    var bases: [SyncEntry: SyncBase?] = [:]
    /// Draft outbox entries the batch added, in sequence order.
    var draftOutboxAdded: [DraftMutation] = []
    /// The upstream's drafts the batch took in (nil: removed).
    var draftBases: [UUID: DraftBase?] = [:]
    /// How many conflicts the batch took in.
    var conflicts = 0
    /// Whether the replica must start again from a snapshot: a draft's text came as steps from a
    /// revision it does not have.
    var needsSnapshot = false
}

extension ReplicaChanges {
    /// Where a failed request's changes are undone to: all but the outbox entries added, of
    /// which only the count — so that taking one before every request copies none of them.
    struct Mark {
        fileprivate var record: ReplicaRecord
        fileprivate var clock: HybridLogicalClock
        fileprivate var outboxAdded: Int
        fileprivate var outboxRemoved: Set<Int64>
        fileprivate var bases: [SyncEntry: SyncBase?]
        fileprivate var draftOutboxAdded: Int
        fileprivate var draftBases: [UUID: DraftBase?]
        fileprivate var conflicts: Int
        fileprivate var needsSnapshot: Bool
    }

    /// The changes as they stand now.
    var mark: Mark {
        Mark(
            record: record, clock: clock, outboxAdded: outboxAdded.count, outboxRemoved: outboxRemoved, bases: bases,
            draftOutboxAdded: draftOutboxAdded.count, draftBases: draftBases, conflicts: conflicts, needsSnapshot: needsSnapshot)
    }

    /// Forgets what changed since `mark`.
    mutating func restore(_ mark: Mark) {
        record = mark.record
        clock = mark.clock
        outboxAdded.removeSubrange(mark.outboxAdded...)
        outboxRemoved = mark.outboxRemoved
        bases = mark.bases
        draftOutboxAdded.removeSubrange(mark.draftOutboxAdded...)
        draftBases = mark.draftBases
        conflicts = mark.conflicts
        needsSnapshot = mark.needsSnapshot
    }
}
