import PrefsKit
import Synchronization

/// Takes committed changes into the cache, the key index and the watch hub: each once, in
/// revision order —
/// whether they are the engine's own batch, published as it commits, or changes another writer of
/// a shared database committed, read back from the change log. With one writer (SQLite) only the
/// engine's own batches come in. Token changes reach the named tokens (``AccessTokens``) the
/// same way, after the changes before them have reached the watchers.
final class ChangeIntake: Sendable {
    let cache: PreferenceCache
    let hub: WatchHub
    let tokens: AccessTokens
    /// The revisions of each key's changes, which a key's history reads by.
    let keyRevisions: KeyRevisions
    /// Held while changes go in, so that two sources never interleave.
    private let lock = Mutex(())
    /// Those waiting for a revision to be taken in (``waitUntilApplied(_:)``).
    private let waiters = Mutex<[RevisionWaiter]>([])

    init(cache: PreferenceCache, hub: WatchHub, tokens: AccessTokens, keyRevisions: KeyRevisions) {
        self.cache = cache
        self.hub = hub
        self.tokens = tokens
        self.keyRevisions = keyRevisions
    }

    /// Publishes a batch the engine has committed. A catch-up may have read it back from the log
    /// first, in part or whole: what it took in is not published twice.
    func publish(_ batch: WriteBatch) {
        lock.withLock { _ in
            let (applied, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
            guard batch.revision > applied else { return }
            let changes = batch.changes.filter { $0.event.revision > applied }
            // Into the key index before the cache says the revision is taken in: a reader who
            // has seen the revision finds its changes there.
            keyRevisions.add(changes.lazy.map(\.event))
            cache.publish(batch.touched, revision: batch.revision, oldestRevision: batch.oldestRevision)
            dropCompactedKeyRevisions(from: oldest, to: batch.oldestRevision)
            hub.publish(changes, revision: batch.revision)
            takeTokenChanges(changes.lazy.map { ($0.event, batch.time) })
        }
        wakeWaiters()
    }

    /// Applies `page`'s changes that follow the newest revision applied, in order; those already
    /// applied are skipped.
    ///
    /// - Returns: The log's oldest revision before, if the page says a compaction has moved it
    ///   up since — another writer's, whose kept rows the key index must read back
    ///   (``KeptRevisionsRestorer``); else nil.
    /// - Throws: `internal` if they do not follow on from it: a gap would be a silent loss.
    @discardableResult
    func take(_ page: ChangeLogPage) throws -> Revision? {
        let moved = try lock.withLock { _ -> Revision? in
            let (start, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
            var applied = start
            var touched: [String: KeyState?] = [:]
            var committed: [CommittedChange] = []
            var tokenChanges: [(ChangeEvent, Double)] = []
            for change in page.changes where change.event.revision > applied {
                guard change.event.revision == applied + 1 else {
                    throw PrefsError(
                        .internal,
                        "The change log jumps from revision \(applied) to \(change.event.revision); nothing after \(applied) was taken in."
                    )
                }
                applied += 1
                if change.event.kind.isTokenChange { tokenChanges.append((change.event, change.time)) }
                guard let key = change.event.key else {
                    committed.append(CommittedChange(event: change.event, before: nil, after: nil))
                    continue
                }
                let before = touched[key] ?? cache.state(of: key)
                var after = before ?? KeyState()
                try after.apply(change.event)
                touched[key] = after
                committed.append(CommittedChange(event: change.event, before: before, after: after))
            }
            guard applied > start else { return nil }
            keyRevisions.add(committed.lazy.map(\.event))
            cache.publish(touched, revision: applied, oldestRevision: max(oldest, page.oldestRevision))
            dropCompactedKeyRevisions(from: oldest, to: page.oldestRevision)
            hub.publish(committed, revision: applied)
            takeTokenChanges(tokenChanges)
            return page.oldestRevision > oldest ? oldest : nil
        }
        wakeWaiters()
        return moved
    }

    /// Has the key index forget the revisions compaction dropped, once the log's oldest revision
    /// has moved from `previous` to `oldest` — with the cache, which now says what is stored, so
    /// what compaction kept.
    private func dropCompactedKeyRevisions(from previous: Revision, to oldest: Revision) {
        guard oldest > previous else { return }
        cache.read { snapshot in keyRevisions.dropCompacted(before: oldest, stored: snapshot.keys) }
    }

    /// Takes token changes in, in order, and ends the watches of the tokens revoked.
    private func takeTokenChanges(_ changes: some Sequence<(ChangeEvent, Double)>) {
        for (event, time) in changes where event.kind.isTokenChange {
            if let revoked = tokens.take(event, time: time) { hub.endWatches(of: revoked, revision: event.revision) }
        }
    }

    /// Returns once `revision` has been taken in, or when the task is cancelled.
    func waitUntilApplied(_ revision: Revision) async {
        let waiter = RevisionWaiter(revision: revision)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.set(continuation)
                waiters.withLock { $0.append(waiter) }
                // Taken in meanwhile: no wake-up would come for it.
                if cache.read({ $0.revision }) >= revision { wakeWaiters() }
            }
        } onCancel: {
            waiter.resume()
        }
    }

    /// Resumes the waiters whose revision has been taken in.
    private func wakeWaiters() {
        let applied = cache.read { $0.revision }
        let woken = waiters.withLock { waiters in
            let (done, waiting) = (waiters.filter { $0.revision <= applied }, waiters.filter { $0.revision > applied })
            waiters = waiting
            return done
        }
        for waiter in woken { waiter.resume() }
    }
}

/// A task waiting for a revision: resumed once, by whichever comes first — the revision taken
/// in, or the task's cancellation.
final class RevisionWaiter: Sendable {
    let revision: Revision
    private let continuation = Mutex<(waiting: CheckedContinuation<Void, Never>?, resumed: Bool)>((nil, false))

    init(revision: Revision) {
        self.revision = revision
    }

    /// Sets what to resume; resumes it at once if the waiter was resumed already.
    func set(_ waiting: CheckedContinuation<Void, Never>) {
        let resumeNow = continuation.withLock { state in
            if state.resumed { return true }
            state.waiting = waiting
            return false
        }
        if resumeNow { waiting.resume() }
    }

    /// Resumes the waiting task, once.
    func resume() {
        let waiting = continuation.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.resumed else { return nil }
            state.resumed = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }
}
