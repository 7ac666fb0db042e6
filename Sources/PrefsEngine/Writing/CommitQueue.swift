/// The group-commit writer's queue (``GroupCommitWriter``): the requests waiting, whether a
/// writer is draining them and where its batch stands, and what it knows of recent batches — as
/// explicit states whose transitions say what the writer does next, so it is tested without a
/// storage or a thread.
struct CommitQueue<Job> {
    /// Whether a writer drains the queue, and where its batch stands.
    enum Writer: Equatable {
        /// No writer: the next request leads.
        case idle
        /// A writer commits batch after batch until the queue is empty.
        case draining(Batch)
    }

    /// Where a draining writer's batch stands.
    enum Batch: Equatable {
        /// Between batches.
        case betweenBatches
        /// Under way, and its commit not yet sent: it will take in what others committed so far.
        case beforeCommit
        /// Its commit sent (or its attempt run again after a conflict).
        case committing
    }

    /// What a request does once queued.
    enum Submitted: Equatable {
        /// It found the writer idle: it leads, committing the waiting batch itself.
        case lead
        /// A writer is draining: it will take the request in a batch.
        case queued
    }

    private(set) var jobs: [Job] = []
    private(set) var writer = Writer.idle
    /// The largest batch of late: the last batch's size, or the one before it less one, if that is
    /// more.
    private(set) var recentBatchSize = 0
    /// Whether the last batch committed after other writers' commits (it was rebased past them):
    /// they compete for the database's revision counter.
    private(set) var othersCommitting = false

    /// Queues `job`.
    ///
    /// - Returns: Whether the request leads (the writer was idle) or is queued.
    mutating func submit(_ job: Job) -> Submitted {
        jobs.append(job)
        guard writer == .idle else { return .queued }
        writer = .draining(.betweenBatches)
        return .lead
    }

    /// Takes the jobs waiting as the next batch, under way.
    ///
    /// - Returns: The batch; nil if none wait, and the writer is idle now.
    mutating func takeBatch() -> [Job]? {
        guard !jobs.isEmpty else {
            writer = .idle
            return nil
        }
        defer { jobs = [] }
        recentBatchSize = max(jobs.count, recentBatchSize - 1)
        writer = .draining(.beforeCommit)
        return jobs
    }

    /// The batch is about to send its commit: from now on it takes in nothing more.
    mutating func commitSending() {
        if case .draining = writer { writer = .draining(.committing) }
    }

    /// The batch committed; `rebased`: after other writers' commits.
    mutating func committed(rebased: Bool) {
        othersCommitting = rebased
    }

    /// The batch is over, committed or not.
    mutating func batchEnded() {
        if case .draining = writer { writer = .draining(.betweenBatches) }
    }

    /// The leader has committed its batch.
    ///
    /// - Returns: Whether requests queued meanwhile, for the storage's writer thread to drain; if
    ///   none did, the writer is idle.
    mutating func leaderCommitted() -> Bool {
        if jobs.isEmpty { writer = .idle }
        return writer != .idle
    }

    /// Whether a batch yet to commit will take in whatever other writers have committed by now:
    /// one is under way and has not sent its commit, or requests wait for the next.
    var willTakeInCommitsSoFar: Bool {
        switch writer {
        case .idle: false
        case .draining(let batch): batch == .beforeCommit || !jobs.isEmpty
        }
    }

    /// Whether the next batch should wait for stragglers: the last batch followed other writers'
    /// commits, batches of late held several requests, and fewer than that wait.
    var waitsForStragglers: Bool {
        othersCommitting && recentBatchSize > 1 && !jobs.isEmpty && jobs.count < recentBatchSize
    }
}
