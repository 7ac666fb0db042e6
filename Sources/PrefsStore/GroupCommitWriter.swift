import Foundation
import GRDB
import Synchronization
import PrefsKit

/// The one path every write takes: requests queue up, and the writer commits all that are
/// waiting in one `BEGIN IMMEDIATE` transaction — one sync for the batch — while each request
/// runs in its own savepoint, so it stays atomic and a failing one does not affect the others.
///
/// A request is acknowledged (its `submit` returns) only after the transaction has committed
/// and the cache shows its effects. While one batch syncs, the next accumulates: under
/// concurrency, batches grow by themselves.
///
/// The request that finds the writer idle leads: it commits the waiting batch on its own thread
/// (a lone writer pays no thread hand-off to the database's queue and back), then leaves
/// whatever queued meanwhile to the database's writer queue, so that its own answer is not held
/// back by later requests. At most one request leads at a time.
final class GroupCommitWriter: Sendable {
    /// A queued request: `perform` runs it inside the transaction and returns what to do once the
    /// transaction has committed (or failed); `fail` reports that the request itself failed.
    private struct Job: Sendable {
        var perform: @Sendable (WriteContext) throws -> @Sendable (Result<Void, any Error>) -> Void
        var fail: @Sendable (any Error) -> Void
    }

    private struct Queue: ~Copyable {
        var jobs: [Job] = []
        var draining = false
    }

    /// What the writer does around each batch: open a context, and publish one that committed.
    struct Hooks: Sendable {
        var makeContext: @Sendable (Database) -> WriteContext
        var finishTransaction: @Sendable (WriteContext) throws -> Void
        var didCommit: @Sendable (WriteContext) -> Void
    }

    private let pool: DatabasePool
    private let hooks: Hooks
    private let queue = Mutex(Queue())
    /// Whether a checkpoint is scheduled (``scheduleCheckpoint()``).
    private let checkpointScheduled = Atomic<Bool>(false)
    /// Whether the store has closed (``close()``).
    private let closed = Atomic<Bool>(false)

    init(pool: DatabasePool, hooks: Hooks) {
        self.pool = pool
        self.hooks = hooks
    }

    /// Runs `work` in the next batch's transaction and returns its result once committed.
    func submit<T: Sendable>(_ work: @escaping @Sendable (WriteContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(work, leadingHere: true) { continuation.resume(with: $0) }
        }
    }

    /// Runs `work` in the next batch's transaction and reports its result to `completion` once
    /// committed (on the thread that committed it). With `leadingHere`, a request that finds the
    /// writer idle commits on the calling thread; without, on the database's writer queue.
    func submit<T: Sendable>(
        _ work: @escaping @Sendable (WriteContext) throws -> T, leadingHere: Bool,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let job = Job(
            perform: { context in
                let value = try work(context)
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
        if leadingHere {
            lead()
        } else {
            pool.asyncWriteWithoutTransaction { db in self.drain(db) }
        }
    }

    /// Commits the waiting batch (the leader's own request among it) on the calling thread,
    /// hands what queued meanwhile to the database's writer queue, then acknowledges the batch:
    /// once the database is free for the next one.
    private func lead() {
        let acknowledge = pool.writeWithoutTransaction { db in commitWaiting(db) }
        let more = queue.withLock { queue in
            if queue.jobs.isEmpty { queue.draining = false }
            return queue.draining
        }
        if more {
            pool.asyncWriteWithoutTransaction { db in self.drain(db) }
        }
        acknowledge?()
    }

    /// Commits batches until the queue is empty.
    private func drain(_ db: Database) {
        while let acknowledge = commitWaiting(db) { acknowledge() }
    }

    /// Commits the jobs waiting, and returns what acknowledges them; with none, the writer
    /// becomes idle, and it returns nil.
    private func commitWaiting(_ db: Database) -> (() -> Void)? {
        let jobs = queue.withLock { queue in
            let jobs = queue.jobs
            queue.jobs = []
            if jobs.isEmpty { queue.draining = false }
            return jobs
        }
        guard !jobs.isEmpty else { return nil }
        return commit(jobs, db)
    }

    /// Commits `jobs` in one transaction, and returns what reports each one's outcome.
    private func commit(_ jobs: [Job], _ db: Database) -> () -> Void {
        let context = hooks.makeContext(db)
        var acknowledgements: [@Sendable (Result<Void, any Error>) -> Void] = []
        do {
            try Self.inBatchTransaction(db) {
                for job in jobs {
                    let checkpoint = context.checkpoint()
                    do {
                        try Self.checkNotRolledBack(db)
                        // A request alone in its batch needs no savepoint: if it fails, the
                        // whole transaction is rolled back, which is the same.
                        acknowledgements.append(
                            jobs.count == 1 ? try job.perform(context) : try Self.inRequestSavepoint(db) { try job.perform(context) })
                    } catch {
                        context.restore(checkpoint)
                        job.fail(StoreErrors.translate(error))
                        if jobs.count == 1 { throw error }
                    }
                }
                try Self.checkNotRolledBack(db)
                try hooks.finishTransaction(context)
            }
        } catch {
            let failure = StoreErrors.translate(error)
            return { for acknowledge in acknowledgements { acknowledge(.failure(failure)) } }
        }
        hooks.didCommit(context)
        scheduleCheckpoint()
        return { for acknowledge in acknowledgements { acknowledge(.success(())) } }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, committed if it returns and rolled back if
    /// it throws: GRDB's `inTransaction(.immediate)`, with `BEGIN` and `COMMIT` compiled once per
    /// connection rather than parsed for every batch. GRDB's block also makes every statement
    /// throw once SQLite has rolled the transaction back by itself (after `SQLITE_FULL`,
    /// `SQLITE_IOERR`…); `body` checks that before each request instead
    /// (``checkNotRolledBack(_:)``): no request's statements ever run outside the transaction.
    private static func inBatchTransaction(_ db: Database, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            try body()
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            // GRDB's rollback: only if SQLite has not rolled back already. The first error is the
            // one to report.
            try? db.rollback()
            throw error
        }
    }

    /// Throws `SQLITE_ABORT` if SQLite has rolled the batch's transaction back by itself.
    private static func checkNotRolledBack(_ db: Database) throws {
        guard db.isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "Transaction was aborted")
        }
    }

    /// Runs `body` in a savepoint, rolled back if it throws: GRDB's `inSavepoint`, inside a
    /// transaction, with its three statements compiled once per connection rather than once per
    /// request. It runs only inside the batch's transaction (``checkNotRolledBack(_:)`` comes
    /// first); if SQLite rolls that back midway, rolling back to the savepoint fails, harmlessly.
    private static func inRequestSavepoint<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "SAVEPOINT request").execute()
        do {
            let value = try body()
            try db.cachedStatement(sql: "RELEASE SAVEPOINT request").execute()
            return value
        } catch {
            // Rolling back alone would leave the savepoint on SQLite's stack. The first error is
            // the one to report, as GRDB's `inSavepoint` does.
            try? db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT request").execute()
            try? db.cachedStatement(sql: "RELEASE SAVEPOINT request").execute()
            throw error
        }
    }

    /// Copies the WAL into the database file soon after a commit, on the database's writer
    /// queue, once the commit's requests are answered.
    ///
    /// SQLite's own auto-checkpoint (turned off, see ``StoreDatabase``) runs inside the commit
    /// that crosses its threshold, so that commit's requests waited for it: a 50 MiB upload spent
    /// ~40% of its time on copying its own bytes a second time. One checkpoint at most is
    /// scheduled at a time, a quarter second after the commit that scheduled it, so a stream of
    /// small writes shares one. Durability does not depend on it: the WAL holds every commit.
    private func scheduleCheckpoint() {
        guard !checkpointScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
            guard !closed.load(ordering: .acquiring) else { return }
            pool.asyncWriteWithoutTransaction { db in
                // On the writer queue, after close()'s own last write if the store closed
                // meanwhile: the connection may be closed, and is not touched then.
                guard !self.closed.load(ordering: .acquiring) else { return }
                self.checkpointScheduled.store(false, ordering: .releasing)
                _ = try? db.checkpoint(.passive)
            }
        }
    }

    /// The store is closing: no scheduled checkpoint runs from now on (the store's close does
    /// the last one itself).
    func close() {
        closed.store(true, ordering: .releasing)
    }
}

/// Turns database errors into the ``PrefsError``s callers understand.
enum StoreErrors {
    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError else { return translateFileError(error) }
        switch error.resultCode {
        case .SQLITE_FULL:
            return PrefsError(.storageFull, "The disk is full; the change was not stored. Free some space and retry.")
        case .SQLITE_READONLY:
            return PrefsError(.unavailable, "The database is read-only; the change was not stored.")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return PrefsError(.unavailable, "The database is busy; the change was not stored. Retry.")
        default:
            return PrefsError(.internal, "The database failed: \(error.message ?? "\(error)"). The change was not stored.")
        }
    }
}

extension StoreErrors {
    /// A failed write of a file beside the database (a staged upload): a full disk is
    /// `storage_full`, any other failure `unavailable`; other errors pass unchanged.
    static func translateFileError(_ error: any Error) -> any Error {
        guard !(error is PrefsError), !(error is CancellationError) else { return error }
        let bridged = error as NSError
        let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError
        let outOfSpace =
            (bridged.domain == NSCocoaErrorDomain && bridged.code == CocoaError.fileWriteOutOfSpace.rawValue)
            || (bridged.domain == NSPOSIXErrorDomain && bridged.code == Int(ENOSPC))
            || (underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(ENOSPC))
        // Any other error passes as it was thrown, not as its NSError bridge.
        guard bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain else { return error }
        if outOfSpace {
            return PrefsError(.storageFull, "The disk is full; the upload was not kept. Free some space and retry.")
        }
        return PrefsError(.unavailable, "Cannot write the upload beside the database: \(bridged.localizedDescription)")
    }
}
