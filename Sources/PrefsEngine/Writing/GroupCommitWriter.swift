import CoreMetrics
import Foundation
import PrefsKit
import Synchronization

/// The one path every write takes: requests queue up, and the writer commits all that are
/// waiting in one transaction — one sync for the batch — while each request runs in its own
/// savepoint, so it stays atomic and a failing one does not affect the others.
///
/// A request is acknowledged (its `submit` returns) only after the transaction has committed
/// and the cache shows its effects. While one batch syncs, the next accumulates: under
/// concurrency, batches grow by themselves.
///
/// The request that finds the writer idle leads: where the storage allows it, it commits the
/// waiting batch on its own thread (a lone writer pays no thread hand-off to the storage's writer
/// and back), then leaves whatever queued meanwhile to the storage's writer thread, so that its
/// own answer is not held back by later requests. At most one request leads at a time.
final class GroupCommitWriter: Sendable {
    /// A queued request: `perform` runs it inside the transaction and returns what to do once the
    /// transaction has committed (or failed); `fail` reports that the request itself failed.
    private struct Job: Sendable {
        var perform: @Sendable (WriteBatch) throws -> @Sendable (Result<Void, any Error>) -> Void
        var fail: @Sendable (any Error) -> Void
    }

    private struct Queue: ~Copyable {
        var jobs: [Job] = []
        var draining = false
    }

    /// What the writer does around each batch: take in what other writers committed, open a
    /// batch, finish its transaction, and publish one that committed.
    struct Hooks: Sendable {
        /// The newest revision the engine has applied.
        var appliedRevision: @Sendable () -> Revision
        /// Applies changes other writers committed, before the batch's own.
        var applyCommittedElsewhere: @Sendable (ChangeLogPage) throws -> Void
        var makeBatch: @Sendable (any WriteConnection) -> WriteBatch
        var finishTransaction: @Sendable (WriteBatch) throws -> Void
        var didCommit: @Sendable (WriteBatch) -> Void
    }

    private let storage: any PrefsStorage
    private let metrics: EngineMetrics
    private let hooks: Hooks
    private let queue = Mutex(Queue())

    init(storage: any PrefsStorage, metrics: EngineMetrics, hooks: Hooks) {
        self.storage = storage
        self.metrics = metrics
        self.hooks = hooks
    }

    /// Runs `work` in the next batch's transaction and returns its result once committed.
    func submit<T: Sendable>(_ work: @escaping @Sendable (WriteBatch) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(work, leadingHere: true) { continuation.resume(with: $0) }
        }
    }

    /// Runs `work` in the next batch's transaction and reports its result to `completion` once
    /// committed (on the thread that committed it). With `leadingHere`, a request that finds the
    /// writer idle commits on the calling thread, where the storage allows it; otherwise on the
    /// storage's writer thread.
    func submit<T: Sendable>(
        _ work: @escaping @Sendable (WriteBatch) throws -> T, leadingHere: Bool,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let job = Job(
            perform: { batch in
                let value = try work(batch)
                return { outcome in completion(outcome.map { value }) }
            },
            fail: { error in completion(.failure(error)) }
        )
        let leads = queue.withLock { queue in
            queue.jobs.append(job)
            defer { queue.draining = true }
            return !queue.draining
        }
        guard leads else { return }
        if leadingHere && storage.commitsOnCallingThread {
            lead()
        } else {
            storage.asyncWithWriter { connection in self.drain(connection) }
        }
    }

    /// Commits the waiting batch (the leader's own request among it) on the calling thread,
    /// hands what queued meanwhile to the storage's writer thread, then acknowledges the batch:
    /// once the database is free for the next one.
    private func lead() {
        let acknowledge = storage.withWriter { connection in commitWaiting(connection) }
        let more = queue.withLock { queue in
            if queue.jobs.isEmpty { queue.draining = false }
            return queue.draining
        }
        if more {
            storage.asyncWithWriter { connection in self.drain(connection) }
        }
        acknowledge?()
    }

    /// Commits batches until the queue is empty.
    private func drain(_ connection: any WriteConnection) {
        while let acknowledge = commitWaiting(connection) { acknowledge() }
    }

    /// Commits the jobs waiting, and returns what acknowledges them; with none, the writer
    /// becomes idle, and it returns nil.
    private func commitWaiting(_ connection: any WriteConnection) -> (() -> Void)? {
        let jobs = queue.withLock { queue in
            let jobs = queue.jobs
            queue.jobs = []
            if jobs.isEmpty { queue.draining = false }
            return jobs
        }
        guard !jobs.isEmpty else { return nil }
        return commit(jobs, connection)
    }

    /// Commits `jobs` in one transaction, and returns what reports each one's outcome.
    private func commit(_ jobs: [Job], _ connection: any WriteConnection) -> () -> Void {
        var acknowledgements: [@Sendable (Result<Void, any Error>) -> Void] = []
        /// How many jobs have run (and were acknowledged or failed on their own).
        var ran = 0
        let batch: WriteBatch
        do {
            let committedElsewhere = try connection.begin(after: hooks.appliedRevision())
            do {
                try hooks.applyCommittedElsewhere(committedElsewhere)
                batch = hooks.makeBatch(connection)
                for job in jobs {
                    let checkpoint = batch.checkpoint()
                    ran += 1
                    do {
                        try connection.checkTransactionIsOpen()
                        // A request alone in its batch needs no savepoint: if it fails, the
                        // whole transaction is rolled back, which is the same.
                        acknowledgements.append(
                            jobs.count == 1 ? try job.perform(batch) : try connection.savepoint { try job.perform(batch) })
                    } catch {
                        batch.restore(checkpoint)
                        job.fail(connection.translate(error))
                        if jobs.count == 1 { throw error }
                    }
                }
                try connection.checkTransactionIsOpen()
                try hooks.finishTransaction(batch)
                let syncing = ContinuousClock.now
                try connection.commit(newestRevision: batch.revision)
                let (seconds, attoseconds) = (ContinuousClock.now - syncing).components
                metrics.commitTime.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                metrics.commits.increment()
                metrics.batchSize.record(jobs.count)
            } catch {
                connection.rollback()
                throw error
            }
        } catch {
            // The first error is the one to report, to the requests that ran and to those that
            // never did (the transaction could not begin, or the batch failed before them).
            let failure = connection.translate(error)
            let neverRan = jobs[ran...]
            return {
                for acknowledge in acknowledgements { acknowledge(.failure(failure)) }
                for job in neverRan { job.fail(failure) }
            }
        }
        hooks.didCommit(batch)
        return { for acknowledge in acknowledgements { acknowledge(.success(())) } }
    }
}
