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
    /// What reports a request's outcome once its batch's transaction has committed (or failed),
    /// given the move of the batch's revisions when the storage committed it after other writers'
    /// changes.
    private typealias Report = @Sendable (Result<RevisionShift?, any Error>) -> Void

    /// A queued request: `perform` runs it inside the transaction and returns what reports its
    /// outcome, with its answer to store when it is idempotent; `replay` reports the outcome an
    /// earlier run of the same idempotent request stored; `fail` reports that the request itself
    /// failed.
    private protocol Job: AnyObject, Sendable {
        /// Who makes the request, why, and its key: what its changes record, and what makes it
        /// safe to repeat.
        var context: WriteContext { get }
        func perform(_ batch: WriteBatch) throws -> (report: Report, answer: String?)
        func replay(_ stored: StoredOutcome) -> Report
        func fail(_ error: any Error)
    }

    /// A request whose work answers `T`, and what it reports to: one object for all a request's
    /// parts, which a batch passes from the queue to its attempt and its reports by reference.
    private final class Request<T: Sendable>: Job {
        let work: @Sendable (WriteBatch) throws -> T
        let context: WriteContext
        let completion: @Sendable (Result<T, any Error>) -> Void
        /// The writer whose keys in flight hold the context's key until the request is answered.
        let writer: GroupCommitWriter

        init(
            _ work: @escaping @Sendable (WriteBatch) throws -> T, context: WriteContext, writer: GroupCommitWriter,
            completion: @escaping @Sendable (Result<T, any Error>) -> Void
        ) {
            self.work = work
            self.context = context
            self.writer = writer
            self.completion = completion
        }

        func perform(_ batch: WriteBatch) throws -> (report: Report, answer: String?) {
            let value = try work(batch)
            let answer = context.idempotency == nil ? nil : try OutcomeCoding.encode(value)
            return ({ outcome in self.complete(outcome.map { shift in shift?.apply(to: value) ?? value }) }, answer)
        }

        func replay(_ stored: StoredOutcome) -> Report {
            let result = OutcomeCoding.decode(T.self, from: stored)
            return { outcome in self.complete(outcome.flatMap { _ in result }) }
        }

        func fail(_ error: any Error) {
            complete(.failure(error))
        }

        /// Reports `result`, its key no longer in flight.
        private func complete(_ result: Result<T, any Error>) {
            if let idempotency = context.idempotency { writer.inFlight.withLock { _ = $0.remove(idempotency.key) } }
            completion(result)
        }
    }

    /// A request that ran without a savepoint failed after changing rows.
    private struct SavepointsNeeded: Error {}

    /// How an attempt at committing a batch ended.
    private enum Attempt {
        /// Committed, or failed for good: what reports each request's outcome.
        case done(() -> Void)
        /// Another writer changed what the batch read before it could commit: nothing was
        /// written, and the batch can run again.
        case conflict(StorageConflict)
        /// A request ran without a savepoint and failed after changing rows, which only rolling
        /// the whole transaction back could undo: nothing was written, and the batch runs again,
        /// each request in a savepoint.
        case needsSavepoints
    }

    /// How long the writer's thread waits, at most, for a batch to grow back to the size of
    /// recent ones while other writers commit (``gatherStragglers()``).
    static let gatherWindow = Duration.microseconds(500)

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
    /// What measures ``gatherWindow``: `ContinuousClock` but in tests, which move it by hand.
    private let clock: any Clock<Duration>
    private let queue = Mutex(CommitQueue<any Job>())
    /// The keys of the idempotent requests submitted and not yet answered.
    private let inFlight = Mutex(Set<String>())

    init(storage: any PrefsStorage, metrics: EngineMetrics, hooks: Hooks, clock: any Clock<Duration> = ContinuousClock()) {
        self.storage = storage
        self.metrics = metrics
        self.hooks = hooks
        self.clock = clock
    }

    /// Whether a batch yet to commit will take in whatever other writers have committed by now:
    /// one is under way and has not sent its commit, or requests wait for the next. Where writers
    /// run side by side, a batch's commit reads what others committed before it, as its beginning
    /// does when it holds them off (``SharedTransactions/commit(newestRevision:following:keysRead:)``)
    /// — unless the batch ends with nothing to commit, or fails.
    var willTakeInCommitsSoFar: Bool {
        queue.withLock { $0.willTakeInCommitsSoFar }
    }

    /// Runs `work` in the next batch's transaction and returns its result once committed; with
    /// an idempotent `context`, only if no earlier run of the same request stored its outcome,
    /// which it returns instead. Its changes record the context's origin.
    ///
    /// The batch commits on the storage's writer thread, never on the caller's: that is a thread
    /// of the concurrency pool, which a disk sync must not hold.
    func submit<T: Sendable>(
        _ work: @escaping @Sendable (WriteBatch) throws -> T, context: WriteContext
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(work, context: context, leadingHere: false) { continuation.resume(with: $0) }
        }
    }

    /// Runs `work` in the next batch's transaction and reports its result to `completion` once
    /// committed (on the thread that committed it). With `leadingHere`, a request that finds the
    /// writer idle commits on the calling thread, where the storage allows it; otherwise on the
    /// storage's writer thread. Its changes record the context's origin.
    ///
    /// With the context's `idempotency`, the outcome is stored under its key in the same
    /// transaction — the answer, or the refusal (a 4xx ``PrefsError``) that changed nothing — and
    /// a request whose key has an outcome stored is not run again: it reports that outcome (or
    /// `idempotency_key_reused` if it is another request). One whose key is still in flight here
    /// is answered `request_in_progress`.
    func submit<T: Sendable>(
        _ work: @escaping @Sendable (WriteBatch) throws -> T, context: WriteContext, leadingHere: Bool,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        if let idempotency = context.idempotency {
            guard inFlight.withLock({ $0.insert(idempotency.key).inserted }) else {
                return completion(.failure(idempotency.inProgressError))
            }
        }
        let job = Request(work, context: context, writer: self, completion: completion)
        guard queue.withLock({ $0.submit(job) }) == .lead else { return }
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
        if queue.withLock({ $0.leaderCommitted() }) {
            storage.asyncWithWriter { connection in self.drain(connection) }
        }
        acknowledge?()
    }

    /// Commits batches until the queue is empty.
    private func drain(_ connection: any WriteConnection) {
        while true {
            if storage.hasOtherWriters { gatherStragglers() }
            guard let acknowledge = commitWaiting(connection) else { return }
            acknowledge()
            connection.betweenBatches()
        }
    }

    /// While other writers commit too, waits a moment for the next batch to reach the size of
    /// recent ones, at most ``gatherWindow``: the requests just acknowledged are on their way
    /// back, and every commit takes a turn at the revision counter all writers share, whatever
    /// its size — as PostgreSQL's `commit_delay` does for its WAL flushes. A writer whose last
    /// commit followed no other writer's never waits (a lone host on PostgreSQL, SQLite), nor
    /// does one whose batches hold one request, nor a batch as big as the recent ones.
    private func gatherStragglers() {
        clock.block(atMost: Self.gatherWindow) { queue.withLock { $0.waitsForStragglers } }
    }

    /// Commits the jobs waiting, and returns what acknowledges them; with none, the writer
    /// becomes idle, and it returns nil.
    private func commitWaiting(_ connection: any WriteConnection) -> (() -> Void)? {
        guard let jobs = queue.withLock({ $0.takeBatch() }) else { return nil }
        return commit(jobs, connection)
    }

    /// Commits `jobs` in one transaction, and returns what reports each one's outcome.
    ///
    /// Where the storage lets writers run side by side (several hosts on PostgreSQL), the batch
    /// first runs without holding the others off, and is committed after whatever they committed
    /// meanwhile; if they changed something it read, it runs again, holding them off from its
    /// start (and once more if that too is caught up in one of theirs, in a deadlock).
    ///
    /// Where the engine is the database's one writer, the requests first run without savepoints
    /// (``attempt(_:_:optimistic:savepoints:)``), and the batch runs again with them in the rare
    /// case that one of them fails after changing rows.
    private func commit(_ jobs: [any Job], _ connection: any WriteConnection) -> () -> Void {
        defer { queue.withLock { $0.batchEnded() } }
        var conflict: StorageConflict?
        var savepoints = storage.hasOtherWriters
        var attempts = [true, false, false][...]
        while let optimistic = attempts.first {
            switch attempt(jobs, connection, optimistic: optimistic, savepoints: savepoints) {
            case .done(let report):
                return report
            case .conflict(let found):
                metrics.conflicts.increment()
                conflict = found
                attempts = attempts.dropFirst()
            case .needsSavepoints:
                savepoints = true
            }
        }
        let failure = PrefsError(
            .unavailable, "Other hosts kept changing what this write read (\(conflict?.reason ?? "")); nothing was stored. Retry.")
        return { for job in jobs { job.fail(failure) } }
    }

    /// Runs `jobs` in one transaction and commits it.
    ///
    /// With `savepoints`, each request runs in a savepoint, so that one that fails is undone
    /// alone, whatever it had changed. Without them — where the engine is the database's one
    /// writer, whose transactions count the rows they change — a request that fails having
    /// changed no row (a refusal: a lock, a schema, a stale revision) needs no undoing in the
    /// database; one that fails after changing rows ends the attempt, to run the batch again
    /// with savepoints — unless it is alone in its batch and not idempotent, when rolling the
    /// transaction back is the same as undoing it. A savepoint per request costs SQLite a copy of
    /// every page the request touches first, for nothing when it succeeds, as nearly all do.
    private func attempt(_ jobs: [any Job], _ connection: any WriteConnection, optimistic: Bool, savepoints: Bool) -> Attempt {
        var acknowledgements: [Report] = []
        acknowledgements.reserveCapacity(jobs.count)
        /// The requests that failed on their own, reported once the attempt is final.
        var failures: [(job: any Job, error: any Error)] = []
        /// How many jobs have run (and were acknowledged or failed on their own).
        var ran = 0
        let batch: WriteBatch
        var shift: RevisionShift?
        // Without savepoints, what counts the rows each request changes.
        let rowCount: (any ExclusiveTransactions)? =
            if !savepoints, case .exclusive(let transactions) = connection.transactions { transactions } else { nil }
        // Without savepoints, a request alone in its batch, and not idempotent (whose refusal is
        // stored), is undone by rolling the transaction back. Where others write too, a request
        // that fails must still reach the commit, which checks that what it failed on was
        // current: there, each request has its savepoint (on PostgreSQL sent only for rows
        // written at once).
        let alone = rowCount != nil && jobs.count == 1 && jobs[0].context.idempotency == nil
        do {
            let committedElsewhere = try begin(connection, optimistic: optimistic)
            do {
                try hooks.applyCommittedElsewhere(committedElsewhere)
                batch = hooks.makeBatch(connection)
                let keys = jobs.compactMap { $0.context.idempotency?.key }
                let stored = keys.isEmpty ? [:] : try connection.storedOutcomes(forKeys: keys)
                for job in jobs {
                    let checkpoint = batch.checkpoint()
                    let rowsBefore = rowCount?.rowsChanged
                    ran += 1
                    if let request = job.context.idempotency, let outcome = stored[request.key] {
                        if outcome.fingerprint == request.fingerprint {
                            acknowledgements.append(job.replay(outcome))
                        } else {
                            failures.append((job, request.reusedError))
                        }
                        continue
                    }
                    do {
                        try connection.checkTransactionIsOpen()
                        batch.context = job.context
                        let run = { () throws -> Report in
                            let (report, answer) = try job.perform(batch)
                            if let request = job.context.idempotency, let answer {
                                try connection.storeOutcome(Self.outcome(of: request, refused: false, body: answer, in: batch))
                            }
                            return report
                        }
                        acknowledgements.append(rowCount != nil ? try run() : try connection.savepoint(run))
                    } catch let conflict as StorageConflict {
                        throw conflict
                    } catch {
                        if let rowCount, let rowsBefore, !alone, rowCount.rowsChanged != rowsBefore {
                            // Its rows are in the transaction, and only rolling it back undoes them.
                            throw SavepointsNeeded()
                        }
                        batch.restore(checkpoint)
                        let error = connection.translate(error)
                        if let request = job.context.idempotency, let refusal = error as? PrefsError, (400..<500).contains(refusal.code.httpStatus) {
                            // Stored like an answer, and reported once it is: if the batch does
                            // not commit, neither does the refusal, and the request gets the
                            // batch's error — so a copy still on its way cannot succeed after a
                            // client was told "refused".
                            let body = try OutcomeCoding.encode(refusal: refusal)
                            try connection.storeOutcome(Self.outcome(of: request, refused: true, body: body, in: batch))
                            acknowledgements.append { outcome in
                                if case .failure(let failure) = outcome { job.fail(failure) } else { job.fail(refusal) }
                            }
                        } else {
                            failures.append((job, error))
                        }
                        if alone { throw error }
                    }
                }
                try connection.checkTransactionIsOpen()
                try hooks.finishTransaction(batch)
                queue.withLock { $0.commitSending() }
                let syncing = ContinuousClock.now
                let rebase = try commit(batch, connection)
                let (seconds, attoseconds) = (ContinuousClock.now - syncing).components
                metrics.commitTime.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                metrics.commits.increment()
                metrics.batchSize.record(jobs.count)
                queue.withLock { $0.committed(rebased: rebase != nil) }
                if let rebase {
                    // Committed after others' changes: those are taken in first, then the
                    // batch's own, moved past them.
                    metrics.rebases.increment()
                    try hooks.applyCommittedElsewhere(rebase.committedBefore)
                    shift = batch.rebase(by: rebase.shift)
                }
            } catch {
                connection.rollback()
                throw error
            }
        } catch let conflict as StorageConflict {
            return .conflict(conflict)
        } catch is SavepointsNeeded {
            return .needsSavepoints
        } catch {
            // The first error is the one to report, to the requests that ran and to those that
            // never did (the transaction could not begin, or the batch failed before them).
            let failure = connection.translate(error)
            let neverRan = jobs[ran...]
            return .done {
                for (job, error) in failures { job.fail(error) }
                for acknowledge in acknowledgements { acknowledge(.failure(failure)) }
                for job in neverRan { job.fail(failure) }
            }
        }
        hooks.didCommit(batch)
        return .done { [shift] in
            for (job, error) in failures { job.fail(error) }
            for acknowledge in acknowledgements { acknowledge(.success(shift)) }
        }
    }

    /// Begins a batch's transaction, and returns what others committed after the newest revision
    /// the engine has applied.
    private func begin(_ connection: any WriteConnection, optimistic: Bool) throws -> ChangeLogPage {
        switch connection.transactions {
        case .exclusive(let transactions):
            return try transactions.begin(after: hooks.appliedRevision())
        case .shared(let transactions):
            return try transactions.begin(after: hooks.appliedRevision(), optimistic: optimistic)
        }
    }

    /// Commits `batch`, and returns how its revisions moved past other writers' commits.
    private func commit(_ batch: WriteBatch, _ connection: any WriteConnection) throws -> CommitRebase? {
        switch connection.transactions {
        case .exclusive(let transactions):
            try transactions.commit(newestRevision: batch.revision)
            return nil
        case .shared(let transactions):
            return try transactions.commit(newestRevision: batch.revision, following: batch.baseRevision, keysRead: batch.keysRead)
        }
    }

    /// An idempotent request's outcome, as `batch` stores it.
    private static func outcome(of request: IdempotentRequest, refused: Bool, body: String, in batch: WriteBatch) -> StoredOutcome {
        StoredOutcome(
            key: request.key, fingerprint: request.fingerprint, refused: refused, body: body, baseRevision: batch.baseRevision,
            createdAt: batch.time)
    }
}

extension Clock where Duration == Swift.Duration {
    /// Blocks the calling thread while `condition` holds, for at most `window` of this clock's time.
    fileprivate func block(atMost window: Duration, while condition: () -> Bool) {
        let deadline = now.advanced(by: window)
        while condition(), now < deadline {
            usleep(20)
        }
    }
}
