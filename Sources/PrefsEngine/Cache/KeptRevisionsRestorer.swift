import Logging
import PrefsKit
import Synchronization

/// Gives the key index (``KeyRevisions``) back what another host's compaction kept and the index
/// forgot: the index drops the revisions below the log's new start but those the cache says are
/// stored, and that compaction kept what was stored as it committed — a change the cache has
/// seen replaced since is still in the log, and in the key's history, until the next one.
///
/// Once the intake has taken in such a compaction (``compacted(from:)``), it reads the log's
/// keyed rows from the old start to the new one — the compaction's survivors, a few rows — in
/// the background, and hands them to ``KeyRevisions/restore(_:below:through:)``. A compaction
/// taken in meanwhile makes it read again, from the lowest start still to read, up to the newest.
final class KeptRevisionsRestorer: Sendable {
    private let storage: any PrefsStorage
    private let index: KeyRevisions
    /// The newest revision the cache has taken in.
    private let applied: @Sendable () -> Revision
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        /// The lowest revision whose rows are still to read; nil when none are.
        var from: Revision?
        /// Counts the compactions taken in, so that one taken in during a read is read for too.
        var compactions = 0
        /// The read under way, if any.
        var task: Task<Void, Never>?
        var closed = false
    }

    init(storage: any PrefsStorage, index: KeyRevisions, applied: @escaping @Sendable () -> Revision, logger: Logger) {
        self.storage = storage
        self.index = index
        self.applied = applied
        self.logger = logger
    }

    /// The intake has taken in a compaction another host committed, which moved the log's start
    /// up from `previous`: reads what it kept from there, unless a read under way will.
    func compacted(from previous: Revision) {
        state.withLock { state in
            guard !state.closed else { return }
            state.from = min(state.from ?? previous, previous)
            state.compactions += 1
            guard state.task == nil else { return }
            state.task = Task(priority: .utility) { await self.restore() }
        }
    }

    /// Waits for the read under way, if any (tests).
    func settled() async {
        await state.withLock { $0.task }?.value
    }

    /// Stops reading; nothing starts after.
    func close() {
        state.withLock { state in
            state.closed = true
            state.task?.cancel()
        }
    }

    /// Reads and restores until no compaction is left to read for.
    private func restore() async {
        while true {
            let next = state.withLock { state -> (from: Revision, compactions: Int)? in
                guard let from = state.from, !state.closed else {
                    state.task = nil
                    return nil
                }
                return (from, state.compactions)
            }
            guard let (from, compactions) = next else { return }
            let below = index.compactedBelow
            do {
                let kept = try await keptRows(from: from, below: below)
                let restored = index.restore(kept, below: below, through: applied())
                let done = state.withLock { state in
                    // Not restored for want of a complete index: the rebuild reads the log as it is.
                    guard restored || !index.isComplete, state.compactions == compactions else { return false }
                    state.from = nil
                    state.task = nil
                    return true
                }
                if done { return }
            } catch {
                state.withLock { state in
                    state.from = nil
                    state.task = nil
                }
                if !Task.isCancelled {
                    logger.warning("Cannot read what a compaction kept; a key's history may miss a step until the next one: \(error)")
                }
                return
            }
        }
    }

    /// The log's keyed rows from `from` up to before `below`.
    private func keptRows(from: Revision, below: Revision) async throws -> [KeyedRevision] {
        let pageSize = 65_536
        var rows: [KeyedRevision] = []
        var after = from - 1
        while after < below - 1 {
            try Task.checkCancellation()
            let page = try await storage.keyedRevisions(after: after, through: below - 1, limit: pageSize)
            rows += page
            guard page.count == pageSize, let last = page.last else { break }
            after = last.revision
        }
        return rows
    }
}
