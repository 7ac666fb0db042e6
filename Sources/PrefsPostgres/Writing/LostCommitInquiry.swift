import Foundation
import Logging
import PostgresNIO
import PrefsEngine
import PrefsKit

/// Finds out on new connections what became of a batch whose connection was lost as it
/// committed, taking ``LostCommitRecovery``'s steps over the writer's link: every wait ends on
/// PostgreSQL's answer, on the connection's closing, or at the recovery's deadline on the engine's
/// clock — and between attempts the writer waits on that clock, never on a sleeping thread.
struct LostCommitInquiry {
    let link: WriterLink
    let logger: Logger
    /// The batch's id, written with it as it commits.
    let batchID: String
    /// How long a commit whose connection was lost keeps trying to find out whether it committed
    /// before its requests are answered `outcome_unknown`.
    var within = Duration.seconds(30)
    /// How long it waits after an attempt that could not reach PostgreSQL.
    var pause = Duration.milliseconds(100)

    /// Whether the batch, which worked on `start` and wrote through `newestRevision`, committed:
    /// if it did, how far its revisions moved and what others committed before it; if it did not,
    /// throws ``StorageConflict`` (it runs again); if PostgreSQL cannot be reached before
    /// ``within``, throws `outcome_unknown`.
    func outcome(start: Revision, newestRevision: Revision) throws -> (moved: Revision, committedBefore: ChangeLogPage) {
        try link.clock.outcome(of: self, start: start, newestRevision: newestRevision)
    }

    /// ``outcome(start:newestRevision:)``, on `clock`.
    fileprivate func outcome<C: Clock<Duration>>(on clock: C, start: Revision, newestRevision: Revision) throws
        -> (moved: Revision, committedBefore: ChangeLogPage)
    {
        var recovery = LostCommitRecovery(
            lostAt: clock.now, within: within, pause: pause, start: start, newestRevision: newestRevision)
        let deadline = ClockAlarm(clock: clock, at: recovery.deadline)
        var committedBefore = ChangeLogPage(changes: [], oldestRevision: 0)
        while true {
            do {
                switch recovery.step {
                case .fence:
                    link.close()
                    let time = Date().timeIntervalSince1970
                    let inserted = try link.run(
                        """
                        INSERT INTO write_batch (id, newest_revision, created_at) VALUES (\(batchID), NULL, \(time))
                        ON CONFLICT (id) DO NOTHING RETURNING id
                        """, until: deadline)
                    recovery.fenced(inserted: !inserted.isEmpty)
                case .readRevision:
                    let rows = try link.run("SELECT newest_revision FROM write_batch WHERE id = \(batchID)", until: deadline)
                    recovery.revisionRead(try rows.first?.makeRandomAccess()["newest_revision"].decode(Int64?.self))
                case .readCommittedBefore(let after, let through):
                    committedBefore = try PostgresRows.changePage(
                        link.run(PostgresRows.changePageQuery(after: after, through: through, limit: .max), until: deadline))
                    recovery.committedBeforeRead()
                case .pause(let until):
                    ClockAlarm(clock: clock, at: until).waitForRing()
                    recovery.pauseEnded(at: clock.now)
                case .finished(.committed(let moved)):
                    logger.warning("The batch whose connection was lost had committed, at revision \(newestRevision + moved).")
                    return (moved, committedBefore)
                case .finished(.notCommitted):
                    throw StorageConflict("the connection to PostgreSQL was lost before the batch committed")
                case .finished(.unknown):
                    throw PrefsError(
                        .outcomeUnknown,
                        "The connection to PostgreSQL at \(link.location) was lost as the change committed, and PostgreSQL could "
                            + "not be reached to find out whether it did. Send the request again with the same Idempotency-Key, or "
                            + "read the value back.")
                }
            } catch where link.isConnectionFailure(error) {
                recovery.connectionFailed(at: clock.now)
            }
        }
    }
}

extension Clock where Duration == Swift.Duration {
    /// `inquiry`'s outcome, on this clock (whose instants the recovery compares: the engine's
    /// clock, opened).
    fileprivate func outcome(of inquiry: LostCommitInquiry, start: Revision, newestRevision: Revision) throws
        -> (moved: Revision, committedBefore: ChangeLogPage)
    {
        try inquiry.outcome(on: self, start: start, newestRevision: newestRevision)
    }
}
