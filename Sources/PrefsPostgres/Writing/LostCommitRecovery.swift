import PrefsKit

/// What became of a batch whose connection was lost as it committed, found out step by step on
/// new connections: the steps ``LostCommitInquiry`` takes, as explicit states stepped by what
/// PostgreSQL answers and by the clock — so every branch is tested without a database.
///
/// The batch's id is fenced — inserted into `write_batch` with no revision, which waits for a
/// commit still under way and makes a later one fail — and read back: an id the fence inserted,
/// or found with no revision, did not commit; one with a revision did. While PostgreSQL cannot be
/// reached, each attempt is made again after a pause, until the deadline; then the outcome is
/// unknown.
struct LostCommitRecovery<Instant: InstantProtocol<Duration>> {
    /// What to do next.
    enum Step: Equatable {
        /// On a new connection, fence the batch's id; answer ``fenced(inserted:)``.
        case fence
        /// The id was there: read the revision it committed at; answer ``revisionRead(_:)``.
        case readRevision
        /// The batch committed after others: read what they committed before it, the change log
        /// after `after` through `through`; answer ``committedBeforeRead()``.
        case readCommittedBefore(after: Revision, through: Revision)
        /// PostgreSQL could not be reached: wait until `until`, then ``pauseEnded(at:)``.
        case pause(until: Instant)
        /// Found out, or gave up.
        case finished(Outcome)
    }

    /// What became of the batch.
    enum Outcome: Equatable {
        /// It committed, its revisions moved up by `moved` past what others committed before it.
        case committed(moved: Revision)
        /// It did not commit, and never will: it may run again.
        case notCommitted
        /// PostgreSQL could not be reached before the deadline.
        case unknown
    }

    private(set) var step = Step.fence
    /// When the recovery gives up.
    let deadline: Instant
    /// How long it waits after an attempt that could not reach PostgreSQL.
    let pause: Duration
    /// The revision whose state the batch worked on.
    private let start: Revision
    /// The batch's newest revision, before any move.
    private let newestRevision: Revision

    /// The recovery of a batch that worked on `start` and wrote through `newestRevision`, whose
    /// connection was lost `now`; it gives up `within` after that.
    init(lostAt now: Instant, within: Duration, pause: Duration, start: Revision, newestRevision: Revision) {
        deadline = now.advanced(by: within)
        self.pause = pause
        self.start = start
        self.newestRevision = newestRevision
    }

    /// The fence ran: `inserted` if it inserted the id (no commit had), else the id was there.
    mutating func fenced(inserted: Bool) {
        step = inserted ? .finished(.notCommitted) : .readRevision
    }

    /// The id's revision was read: nil if a fence of this recovery's, on an attempt whose answer
    /// was lost, inserted it.
    mutating func revisionRead(_ revision: Revision?) {
        guard let revision else {
            step = .finished(.notCommitted)
            return
        }
        let moved = revision - newestRevision
        step = moved > 0 ? .readCommittedBefore(after: start, through: start + moved) : .finished(.committed(moved: moved))
    }

    /// What others committed before the batch was read.
    mutating func committedBeforeRead() {
        guard case .readCommittedBefore(let after, let through) = step else { return }
        step = .finished(.committed(moved: through - after))
    }

    /// The step under way could not reach PostgreSQL, `now`: pause, or give up at the deadline.
    mutating func connectionFailed(at now: Instant) {
        step = now < deadline ? .pause(until: min(now.advanced(by: pause), deadline)) : .finished(.unknown)
    }

    /// The pause ended, `now`: fence again on a new connection, unless the deadline has come.
    mutating func pauseEnded(at now: Instant) {
        step = now < deadline ? .fence : .finished(.unknown)
    }
}
