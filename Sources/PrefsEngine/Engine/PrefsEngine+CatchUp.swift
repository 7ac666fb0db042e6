import Logging
import PrefsKit
import Synchronization

/// Taking in changes other writers committed to a shared database (several hosts on one
/// PostgreSQL database): the change log is the truth, and every change in it reaches the cache
/// and the watchers once, in revision order (``ChangeIntake``) — whether the engine reads it at
/// the start of its own transaction, or when the storage wakes it. With one writer (SQLite)
/// there is never anything to take in.
extension PrefsEngine {
    /// Returns once this engine has taken in `revision`: at once when it has (with one writer, a
    /// revision it committed itself always is); else it reads the change log, and waits at most
    /// ``StoreConfiguration/revisionWait`` for the revision to arrive.
    ///
    /// - Parameter revision: The revision to wait for.
    /// - Throws: ``PrefsError`` — `behind`, with the revision it has taken in, for a revision the
    ///   database has that did not arrive in time; `invalid_request` naming the newest, at once,
    ///   for one beyond the newest the database has assigned, which will never come.
    public func waitForRevision(_ revision: Revision) async throws {
        try await waitUntilTakenIn(revision) { newest in
            PrefsError(
                .invalidRequest,
                "Revision \(revision) is ahead of the store, whose newest revision is \(newest): no change has made it. "
                    + "Ask for a revision this store answered (a write's, or a read's).",
                newestRevision: newest)
        }
    }

    /// ``waitForRevision(_:)``, with `ahead` making the error of a revision the database does not
    /// have from its newest.
    func waitUntilTakenIn(_ revision: Revision, ahead: (_ newest: Revision) -> PrefsError) async throws {
        let applied = cache.read { $0.revision }
        guard applied < revision else { return }
        // With one writer, the engine has every revision the database has.
        guard storage.hasOtherWriters else { throw ahead(applied) }
        catchUp()
        // Whether the database has the revision at all, asked beside the wait: a database that
        // cannot be reached now may not answer before the wait is over, nor when it is cancelled.
        let (newestBelow, found) = AsyncStream<Revision>.makeStream()
        let asking = Task { [storage] in
            if let newest = try? await storage.newestRevision(), newest < revision { found.yield(newest) }
            found.finish()
        }
        defer { asking.cancel() }
        let intake = intake
        let outcome = await withTaskGroup(of: RevisionWait?.self) { group in
            group.addTask {
                await intake.waitUntilApplied(revision)
                return Task.isCancelled ? nil : .arrived
            }
            group.addTask { [wait = configuration.revisionWait] in
                try? await Task.sleep(for: wait)
                return .waitedEnough
            }
            group.addTask {
                for await newest in newestBelow { return .ahead(newest) }
                return nil
            }
            defer { group.cancelAll() }
            for await outcome in group {
                if let outcome { return outcome }
            }
            return .waitedEnough
        }
        switch outcome {
        case .arrived:
            return
        case .ahead(let newest):
            throw ahead(newest)
        case .waitedEnough:
            let applied = cache.read { $0.revision }
            guard applied < revision else { return }
            throw PrefsError.behind(revision: revision, applied: applied)
        }
    }

    /// ``catchUp()``, unless `announced` — the revision another writer's commit reached, as its
    /// notification says — is taken in already, or soon will be.
    ///
    /// The engine's own writer takes in what others committed as it commits each batch, so on a
    /// host that writes too, most notifications arrive after their changes, and
    /// the rest while a batch is under way that will take them in as it commits. Such a
    /// notification is left to that batch for at most ``CatchUpState/writerGrace``; if the
    /// revision has not arrived by then (the batch failed, or had nothing to commit), the engine
    /// reads the log itself.
    func catchUp(toReach announced: Revision?) {
        guard let announced else { return catchUp() }
        guard cache.read({ $0.revision }) < announced else { return }
        guard writer.willTakeInCommitsSoFar else { return catchUp() }
        let checks = catchingUp.withLock { state in
            defer { state.leftToWriter = max(state.leftToWriter ?? 0, announced) }
            return state.leftToWriter == nil
        }
        guard checks else { return }
        Task { [clock] in
            try? await clock.sleep(for: CatchUpState.writerGrace)
            let awaited = catchingUp.withLock { state in
                defer { state.leftToWriter = nil }
                return state.leftToWriter ?? 0
            }
            if cache.read({ $0.revision }) < awaited { catchUp() }
        }
    }

    /// Reads the change log after the newest revision applied and takes it in, page by page,
    /// until it is current. One catch-up runs at a time; a wake-up meanwhile makes it read once
    /// more when it is done, so no wake-up is lost.
    func catchUp() {
        let starts = catchingUp.withLock { state in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard starts else { return }
        Task {
            repeat {
                do {
                    try await catchUpOnce()
                } catch {
                    logger.error("Cannot take in changes committed elsewhere: \(error)")
                }
            } while catchingUp.withLock { state in
                state.running = state.again
                state.again = false
                return state.running
            }
        }
    }

    /// One pass of ``catchUp()``: pages of the change log until one comes back short of a full
    /// page, which ends at the newest revision the log had. (A commit after that read wakes the
    /// engine again: its notification follows it.)
    private func catchUpOnce() async throws {
        let pageSize = 1000
        while true {
            let applied = cache.read { $0.revision }
            let page = try await storage.changeLog(after: applied, through: .max, limit: pageSize)
            guard applied >= page.oldestRevision - 1 else {
                throw PrefsError.compacted(since: applied, oldest: page.oldestRevision)
            }
            try Self.takeCommittedElsewhere(page, intake: intake, keptRevisions: keptRevisions)
            guard page.changes.count == pageSize else { return }
        }
    }
}

/// Whether a catch-up runs, and whether another was asked for meanwhile; and the newest revision
/// announced while the engine's writer was to take it in, to check once the grace is over.
struct CatchUpState {
    /// How long a notification is left to the writer's batch under way before the engine reads
    /// the change log itself.
    static let writerGrace = Duration.milliseconds(5)

    var running = false
    var again = false
    var leftToWriter: Revision?
}

/// How waiting for a revision ended: it was taken in, the wait allowed was over, or the database
/// turned out not to have it (its newest revision is below).
private enum RevisionWait: Sendable {
    case arrived, waitedEnough, ahead(Revision)
}
