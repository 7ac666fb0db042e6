import Foundation
import PrefsKit
import Synchronization

/// A store's life as a replica of an upstream prefsd: its committed sync state (``ReplicaState``),
/// the exchanges that push its outbox and pull the upstream's changes, and what `prefsctl sync`
/// shows of them.
///
/// Two loops run while the engine syncs: a *pusher*, woken by every commit that adds to the
/// outbox, which pushes at once; and a *puller*, which holds a long poll open so that the
/// upstream's changes arrive as they are made. Either takes in everything its answer carries; the
/// upstream takes each change in once only, and a cursor only moves forward, so the two never
/// need to wait for each other. A failed exchange is tried again after a pause that doubles up
/// to ``longestPause``.
final class SyncReplica: Sendable {
    /// How many outbox entries one exchange pushes at most.
    static let mutationsPerExchange = 1000
    /// How long the puller's long poll may wait at the upstream, in milliseconds.
    static let longPoll = 25_000
    /// The pause after a first failed exchange.
    static let firstPause = Duration.milliseconds(50)
    /// The longest pause between failed exchanges.
    static let longestPause = Duration.seconds(5)

    private let state: Mutex<ReplicaState>
    private let log = Mutex(ExchangeLog())
    private let pushes: AsyncStream<Void>
    private let pushWanted: AsyncStream<Void>.Continuation
    private let loops = Mutex<[Task<Void, Never>]>([])
    /// Pushes take turns.
    let pushTurns = PushTurns()
    /// How the replica reaches its upstream, once it syncs (the loops', else the one it last
    /// exchanged through): attachments' bytes are fetched through it when read.
    let transport = Mutex<(any SyncTransport)?>(nil)
    /// The downloads of blobs under way, by SHA-256: a read of bytes being fetched waits for
    /// their fetch (``PrefsEngine/fetchBlob(of:)``).
    let fetches = Mutex<[String: Task<Void, any Error>]>([:])

    /// What the replica remembers of its exchanges since it started.
    private struct ExchangeLog {
        var last: SyncStatus.Exchange?
        var lastSuccess: Date?
        var upstreamRevision: Revision?
        var failures = 0
    }

    init(_ state: ReplicaState) {
        self.state = Mutex(state)
        (pushes, pushWanted) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: What batches read and publish

    /// A batch's starting point: no changes yet to the committed state.
    func changes() -> ReplicaChanges {
        state.withLock { ReplicaChanges(record: $0.record, clock: $0.clock) }
    }

    /// The upstream's entry as committed.
    func base(of entry: SyncEntry) -> SyncBase? {
        state.withLock { $0.bases[entry] }
    }

    /// The sequence numbers of `entry`'s outbox entries, as committed.
    func pendingSequences(of entry: SyncEntry) -> Set<Int64> {
        state.withLock { $0.pending[entry] ?? [] }
    }

    /// The upstream's draft as committed.
    func draftBase(of id: UUID) -> DraftBase? {
        state.withLock { $0.draftBases[id] }
    }

    /// The outbox entries of draft `id`, as committed, by sequence number.
    func pendingDraftMutations(of id: UUID) -> [Int64: DraftMutation] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: (state.pendingDrafts[id] ?? []).map { ($0, state.draftOutbox[$0]!) })
        }
    }

    /// Takes in a committed batch's changes; wakes the pusher if it added to the outbox.
    func publish(_ changes: ReplicaChanges) {
        state.withLock { $0.apply(changes) }
        if !changes.outboxAdded.isEmpty || !changes.draftOutboxAdded.isEmpty { pushWanted.yield() }
    }

    // MARK: Exchanges

    /// How old a draft's base may be, in seconds, for a change's text to go as an edit of it:
    /// well within the time the upstream keeps its versions (``DraftVersion/retention``).
    static let textEditBaseAge: Double = 7 * 24 * 3600

    /// The next request at `now` (seconds since 1970): the cursor, and the oldest outbox entries
    /// if `pushing` — a draft's text as an edit of the text of its base, where the replica has
    /// that base and it is recent.
    func request(pushing: Bool, wait: Int?, now: Double) -> SyncRequest {
        state.withLock { state in
            guard pushing else { return SyncRequest(cursor: state.record.cursor, wait: wait) }
            let mutations = state.nextMutations(limit: Self.mutationsPerExchange)
            let drafts = state.nextDraftMutations(limit: Self.mutationsPerExchange - mutations.count).map { mutation in
                guard let base = state.draftBases[mutation.id], base.revision == mutation.base, let draft = base.draft,
                    draft.updatedAt.timeIntervalSince1970 > now - Self.textEditBaseAge
                else { return mutation }
                return mutation.sendingText(asEditOf: draft.text)
            }
            return SyncRequest(cursor: state.record.cursor, mutations: mutations, drafts: drafts, wait: wait)
        }
    }

    /// Whether the outbox has entries.
    var hasOutbox: Bool {
        state.withLock { !$0.outbox.isEmpty || !$0.draftOutbox.isEmpty }
    }

    /// Notes how an exchange ended, at `time`.
    func note(_ outcome: Result<SyncAnswer, any Error>, pushed: Int, time: Date) {
        log.withLock { log in
            switch outcome {
            case .success(let answer):
                log.last = SyncStatus.Exchange(time: time, succeeded: true, pushed: pushed, pulled: answer.changes.count)
                log.lastSuccess = time
                log.upstreamRevision = max(log.upstreamRevision ?? 0, answer.newest)
                log.failures = 0
            case .failure(let error):
                let message = (error as? PrefsError).map { "\($0.code.rawValue): \($0.message)" } ?? "\(error)"
                log.last = SyncStatus.Exchange(time: time, succeeded: false, error: message, pushed: 0, pulled: 0)
                log.failures += 1
            }
        }
    }

    /// The pause before trying again after the exchanges that failed in a row.
    var pause: Duration {
        let failures = log.withLock { $0.failures }
        var pause = Self.firstPause
        for _ in 1..<max(1, min(failures, 16)) where pause < Self.longestPause { pause *= 2 }
        return min(pause, Self.longestPause)
    }

    /// Where sync stands.
    var status: SyncStatus {
        let (record, outbox, conflicts) = state.withLock { ($0.record, $0.outbox.count + $0.draftOutbox.count, $0.conflicts) }
        return log.withLock { log in
            SyncStatus(
                upstream: record.upstream, device: record.device, role: record.role, scope: record.scope, cursor: record.cursor,
                upstreamRevision: log.upstreamRevision, outbox: outbox, snapshotTaken: record.snapshotTaken,
                lastExchange: log.last, lastSuccess: log.lastSuccess, conflicts: conflicts)
        }
    }

    // MARK: Loops

    /// Starts the pusher and the puller, each running `exchange` (which sends a request and takes
    /// its answer in) until ``stop()``.
    func start(
        exchange: @escaping @Sendable (_ pushing: Bool, _ wait: Int?) async -> Bool, sleep: @escaping @Sendable (Duration) async -> Void
    ) {
        let pusher = Task { [pushes] in
            for await _ in pushes {
                // Until the outbox is empty, pausing after an exchange that failed.
                while !Task.isCancelled, hasOutbox {
                    guard await exchange(true, nil) else {
                        await sleep(pause)
                        continue
                    }
                }
            }
        }
        let puller = Task {
            // The first exchange answers at once, so that a replica that starts knows soon where
            // it stands; the later ones hold a long poll.
            var wait: Int? = nil
            while !Task.isCancelled {
                if await exchange(false, wait) {
                    wait = Self.longPoll
                    continue
                }
                await sleep(pause)
            }
        }
        loops.withLock { $0 = [pusher, puller] }
        if hasOutbox { pushWanted.yield() }
    }

    /// Stops the loops; returns the transport they used, for its owner to shut down.
    func stop() -> (any SyncTransport)? {
        pushWanted.finish()
        for task in loops.withLock({ $0 }) { task.cancel() }
        return transport.withLock { $0 }
    }
}
