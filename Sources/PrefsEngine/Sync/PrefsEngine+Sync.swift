import CoreMetrics
import Foundation
import PrefsKit
import Synchronization

/// Sync across devices, both sides of it: an engine serves its replicas' exchanges (it is their
/// upstream), and an engine that is a replica pushes its outbox and pulls its upstream's changes.
extension PrefsEngine {
    /// The change kinds a replica is sent: preferences, schemas, locks and conflicts, and the
    /// changes of drafts (each sent as the draft is now).
    static var syncedKinds: [ChangeEvent.Kind] {
        [.set, .reset, .lock, .unlock, .schema, .conflict, .draftCreated, .draftUpdated, .draftDeleted, .attachmentAdded,
         .attachmentUpdated, .attachmentRemoved]
    }
    /// How many of the upstream's changes one answer carries at most.
    static var changesPerAnswer: Int { 5000 }

    // MARK: The upstream's side

    /// Serves one exchange of the device whose token `grant` is: takes its changes in (once
    /// only, conflicts resolved and recorded) and answers with what became of each, and the
    /// changes after its cursor within its reach — after a snapshot, if it needs one. With
    /// nothing to send, it waits up to ``SyncRequest/wait`` for a change.
    ///
    /// - Throws: ``PrefsError`` — `forbidden` without a named token, or for a reader's push;
    ///   `invalid_request` for sequence numbers that do not increase; `too_large` beyond
    ///   ``SyncReplica/mutationsPerExchange`` changes.
    package func exchange(_ request: SyncRequest, grant: AccessGrant, context: WriteContext) async throws -> SyncAnswer {
        guard let device = grant.token else {
            throw PrefsError(
                .forbidden, "Sync needs a named token: a device is its token (prefsctl token create NAME --role writer --scope S).")
        }
        // A stream's exchanges were let through when it opened: the token may be gone since.
        try checkNotRevoked(device)
        try Self.check(request)
        var results: [SyncAnswer.Result] = []
        var draftResults: [SyncAnswer.DraftResult] = []
        if !request.mutations.isEmpty || !request.drafts.isEmpty {
            guard grant.role >= .writer else {
                throw PrefsError(
                    .forbidden,
                    "Token '\(device)' is a reader at \(grant.scope.path); a device's push needs a writer there. Nothing was changed.")
            }
            let (taken, draftsTaken, rules) = try await write(context) { batch in
                try batch.takeIn(request, from: device, reach: grant.scope)
            }
            (results, draftResults) = (taken, draftsTaken)
            for outcome in results.map(\.outcome) + draftResults.map(\.outcome) { metrics.syncMutations[outcome]?.increment() }
            for rule in rules { metrics.syncConflicts[rule.rawValue]?.increment() }
            // Devices that come back online together push side by side: the answer waits until
            // the writes queued beside this one have committed (an empty request at the end of
            // the queue), so that each device's first answer brings the others' changes.
            try await write(WriteContext()) { _ in }
        }
        // A long poll only when there is nothing to answer with yet.
        let answered = !results.isEmpty || !draftResults.isEmpty
        let wait = answered ? 0 : max(0, request.wait ?? 0)
        let deadline = wait > 0 ? ClockDeadline(in: .milliseconds(wait), on: clock) : nil
        var after = request.cursor
        while true {
            let (snapshot, changes, drafts, cursor, more) = try await pull(after: after, reach: grant.scope, device: device)
            // Answer at once without a long poll; with one, once it is over, once there is something
            // to send, or once the daemon starts to stop (its watches end too).
            guard let deadline, !deadline.hasPassed, snapshot == nil, changes.isEmpty, drafts.isEmpty, !answered, !hub.isClosed
            else {
                return SyncAnswer(
                    device: device, role: grant.role, scope: grant.scope, results: results,
                    draftResults: request.drafts.isEmpty ? nil : draftResults, snapshot: snapshot, changes: changes,
                    drafts: drafts.isEmpty ? nil : drafts, cursor: cursor, more: more ? true : nil,
                    newest: max(cursor, committedRevision))
            }
            // Nothing within the device's reach yet: wait for the next change, wherever it is.
            after = cursor
            try await waitForChange(after: cursor, until: deadline)
            try checkNotRevoked(device)
        }
    }

    /// Throws `unauthorized` if the named token `device` syncs as has been revoked.
    private func checkNotRevoked(_ device: String) throws {
        guard token(named: device) != nil else { throw PrefsError(.unauthorized, "The token '\(device)' was revoked.") }
    }

    /// Returns once the engine starts to stop: its watches and long polls end then.
    package func waitUntilStopping() async {
        await hub.waitUntilClosed()
    }

    /// Checks a request's shape: at most ``SyncReplica/mutationsPerExchange`` changes, with
    /// increasing positive sequence numbers.
    private static func check(_ request: SyncRequest) throws {
        let count = request.mutations.count + request.drafts.count
        guard count <= SyncReplica.mutationsPerExchange else {
            throw PrefsError(.tooLarge, "An exchange pushes at most \(SyncReplica.mutationsPerExchange) changes; this one has \(count).")
        }
        guard request.cursor >= 0 else { throw PrefsError(.invalidRequest, "The cursor is a revision, 0 or more.") }
        for sequences in [request.mutations.map(\.seq), request.drafts.map(\.seq)] {
            var previous: Int64 = 0
            for seq in sequences {
                guard seq > previous else {
                    throw PrefsError(.invalidRequest, "Sequence numbers must increase from 1: \(seq) follows \(previous).")
                }
                previous = seq
            }
        }
        guard Set(request.mutations.map(\.seq)).isDisjoint(with: request.drafts.map(\.seq)) else {
            throw PrefsError(.invalidRequest, "A sequence number names one change: a preference's or a draft's, not both.")
        }
    }

    /// The changes after `cursor` within `reach`, and the drafts changed after it as they are
    /// now; or a snapshot when the replica has none yet, its cursor is not this upstream's at
    /// all, or compaction dropped a change within its reach after its cursor. A cursor older than
    /// the log's oldest revision is still answered with changes when none within its reach was
    /// dropped: the log kept every one of them (those below its oldest revision set what is
    /// stored now). Compaction keeps no trace of drafts' changes, so a replica with drafts
    /// within its reach starts again from a snapshot then.
    private func pull(after cursor: Revision, reach: ScopePath, device: String) async throws
        -> (
            snapshot: SyncAnswer.Snapshot?, changes: [SyncAnswer.Change], drafts: [SyncAnswer.DraftState], cursor: Revision,
            more: Bool
        )
    {
        let (through, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
        if cursor == 0 || cursor > through {
            let snapshot = try await snapshot(reach: reach)
            return (snapshot, [], [], snapshot.revision, false)
        }
        guard cursor < through else { return (nil, [], [], cursor, false) }
        // Not the device's own values: their results told it their revisions.
        let filter = ChangeLogFilter(
            reach: reach, kinds: Self.syncedKinds, notFromDevice: device, after: cursor, through: through)
        let page = try await storage.changeLog(matching: filter, limit: Self.changesPerAnswer)
        if cursor + 1 < max(oldest, page.oldestRevision) {
            // The log no longer holds every change after the cursor: it holds every one within
            // the device's reach if compaction dropped none of them. Read after the log, so that
            // a compaction after the read of the log is seen here.
            let dropped = try await storage.newestCompactedAway(matching: ChangeLogFilter(reach: reach, kinds: Self.syncedKinds))
            let draftsDropped = dropped > cursor ? false : try await hasDrafts(within: reach)
            if dropped > cursor || draftsDropped {
                let snapshot = try await snapshot(reach: reach)
                return (snapshot, [], [], snapshot.revision, false)
            }
        }
        let changes = page.changes.compactMap(SyncAnswer.Change.init)
        let drafts = try await draftStates(changedIn: page.changes)
        let more = page.changes.count == Self.changesPerAnswer
        return (nil, changes, drafts, more ? page.changes.last!.event.revision : through, more)
    }

    /// The drafts `changes` changed, each once, as of the last of its changes there (from its
    /// versions: the replica's cursor moves to the end of `changes`, and what it knows of each
    /// draft with it). Its text goes as steps from the draft's revision before the first of them —
    /// the one the replica has — when that is shorter than the text.
    private func draftStates(changedIn changes: [LoggedChange]) async throws -> [SyncAnswer.DraftState] {
        var order: [UUID] = []
        var spans: [UUID: (first: Int64, last: Int64)] = [:]
        for change in changes {
            guard let text = change.event.draft, let id = UUID(uuidString: text), let revision = change.event.draftRevision else {
                continue
            }
            if let span = spans[id] { spans[id] = (span.first, revision) } else { (spans[id], order) = ((revision, revision), order + [id]) }
        }
        var states: [SyncAnswer.DraftState] = []
        for id in order {
            let (first, last) = spans[id]!
            let versions = try await storage.draftVersions(of: id, from: first - 1, through: last)
            if let state = SyncAnswer.DraftState(id, versions: versions, from: first - 1, through: last) {
                states.append(state)
            } else {
                // Its versions are not all kept: as it is now, whole.
                let draft = try await storage.draft(id)
                states.append(SyncAnswer.DraftState(id: id, revision: draft?.revision ?? last, draft: draft))
            }
        }
        return states
    }

    /// Whether any draft of an account within `reach` is stored.
    private func hasDrafts(within reach: ScopePath) async throws -> Bool {
        try await storage.drafts(account: nil, thread: nil).contains { draft in
            (try? WriteBatch.accountScope(draft.account)).map(reach.contains) ?? false
        }
    }

    /// Every entry within `reach` (at it, below and above it) and every schema, as of one
    /// revision; and the drafts of the accounts within it, as they are now.
    private func snapshot(reach: ScopePath) async throws -> SyncAnswer.Snapshot {
        var snapshot = cache.read { snapshot in
            var values: [SyncAnswer.Snapshot.Value] = []
            var locks: [SyncAnswer.Snapshot.Lock] = []
            var schemas: [String: PreferenceSchema] = [:]
            for (key, state) in snapshot.keys {
                if let schema = state.schema { schemas[key] = schema }
                for (scope, stored) in state.values where reach.contains(scope) || scope.contains(reach) {
                    values.append(.init(key: key, scope: scope, value: stored.value, revision: stored.revision))
                }
                for (scope, revision) in state.locks where reach.contains(scope) || scope.contains(reach) {
                    locks.append(.init(key: key, scope: scope, revision: revision))
                }
            }
            values.sort { ($0.key, $0.scope) < ($1.key, $1.scope) }
            locks.sort { ($0.key, $0.scope) < ($1.key, $1.scope) }
            return SyncAnswer.Snapshot(revision: snapshot.revision, values: values, locks: locks, schemas: schemas)
        }
        let drafts = try await storage.drafts(account: nil, thread: nil).filter { draft in
            (try? WriteBatch.accountScope(draft.account)).map(reach.contains) ?? false
        }
        snapshot.drafts = drafts.isEmpty ? nil : drafts
        return snapshot
    }

    /// Returns once a change after `revision` is taken in, at `deadline`, or once the daemon
    /// starts to stop (``endWatches()``); throws `CancellationError` once the task is cancelled
    /// (a device's stream gone), so that its long poll ends rather than looking again.
    private func waitForChange(after revision: Revision, until deadline: ClockDeadline) async throws {
        let (intake, hub) = (intake, hub)
        await deadline.race {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await intake.waitUntilApplied(revision + 1) }
                group.addTask { await hub.waitUntilClosed() }
                await group.next()
                group.cancelAll()
            }
        }
        try Task.checkCancellation()
        try ensureOpen()
    }

    /// The conflicts `query` selects.
    package func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict] {
        try await storage.conflicts(query)
    }

    public func conflicts(
        scope: ScopePath?, key: KeyName?, since: Revision?, from: Date?, limit: Int?, newestFirst: Bool
    ) async throws -> [SyncConflict] {
        try await conflicts(
            ConflictQuery(
                subtree: scope, key: key?.rawValue, after: since, from: from?.timeIntervalSince1970, limit: limit ?? 1000,
                newestFirst: newestFirst))
    }

    /// The conflict recorded at `revision`.
    ///
    /// - Throws: ``PrefsError`` `not_found` if none was.
    package func conflict(at revision: Revision) async throws -> SyncConflict {
        let found = try await storage.conflicts(ConflictQuery(after: revision - 1, limit: 1)).first
        guard let found, found.revision == revision else {
            throw PrefsError(.notFound, "No conflict was recorded at revision \(revision) (prefsctl conflicts lists them).")
        }
        return found
    }

    public func restoreLoser(ofConflict conflict: Revision, loser: Int) async throws -> WriteResult {
        try await restoreLoser(of: try await self.conflict(at: conflict), loser: loser, context: libraryCall)
    }

    /// ``restoreLoser(ofConflict:loser:)`` of `conflict`, made in `context`: a preference's
    /// value set (or reset) again; a draft made what the loser held (or deleted, for a delete
    /// that lost).
    package func restoreLoser(of conflict: SyncConflict, loser: Int, context: WriteContext) async throws -> WriteResult {
        guard conflict.losers.indices.contains(loser) else {
            throw PrefsError(
                .notFound, "The conflict at revision \(conflict.revision) has \(conflict.losers.count) loser(s); there is no loser \(loser).")
        }
        var context = context
        if context.origin.reason == nil { context.origin.reason = "restored the loser of conflict \(conflict.revision)" }
        if let draft = conflict.draft {
            let restored = try conflict.losers[loser].value.map { try WireJSON.decode(Draft.self, from: $0.canonicalData) }
            return try await write(context) { batch in
                try batch.restoreDraft(draft, to: restored)
                return WriteResult(revision: batch.revision)
            }
        }
        let name = try KeyName(conflict.key)
        guard let value = conflict.losers[loser].value else {
            return try await reset(name, scope: conflict.scope, recursive: false, ifRevision: nil, context: context)
        }
        return try await set(name, to: value, scope: conflict.scope, ifRevision: nil, context: context)
    }

    public func syncStatus() async throws -> SyncStatus {
        guard let status = replicaStatus else { throw PrefsError(.notFound, "This store is no replica: it has no upstream.") }
        return status
    }

    // MARK: The replica's side

    /// Where the replica's sync stands; nil for a store that is no replica (``syncStatus()``
    /// without the error).
    package var replicaStatus: SyncStatus? {
        replica?.status
    }

    /// Starts syncing with the upstream through `transport`: a pusher and a long-polling puller
    /// (``SyncReplica``), until the engine closes. Nothing happens for a store that is no
    /// replica.
    package func startSync(through transport: any SyncTransport) {
        guard let replica else { return }
        replica.transport.withLock { $0 = transport }
        let clock = clock
        replica.start(
            exchange: { [weak self] pushing, wait in
                guard let self else { return false }
                return await self.exchange(through: transport, pushing: pushing, wait: wait)
            },
            sleep: { pause in try? await clock.sleep(for: pause) })
    }

    /// One exchange through `transport`: sends the bytes of the attachments its drafts add that
    /// the upstream lacks, then the next request, and takes the answer in (its drafts'
    /// attachments' bytes are fetched when read); notes how it went. Returns whether it
    /// succeeded.
    @discardableResult
    package func exchange(through transport: any SyncTransport, pushing: Bool, wait: Int?) async -> Bool {
        guard let replica else { return false }
        replica.transport.withLock { $0 = $0 ?? transport }
        if pushing {
            await replica.pushTurns.take()
        } else if wait != nil {
            // A long poll waits for the push under way, whose answer brings what it would: sent
            // beside it, it would carry the same changes again (as a separate answer).
            await replica.pushTurns.take()
            replica.pushTurns.give()
        }
        defer { if pushing { replica.pushTurns.give() } }
        let request = replica.request(pushing: pushing, wait: wait, now: wallClock.now())
        let outcome: Result<SyncAnswer, any Error>
        let blobs = transport as? any BlobTransport
        do {
            if let blobs, !request.drafts.isEmpty { try await uploadAttachments(of: request.drafts, through: blobs) }
            let answer = try await transport.exchange(request)
            if !request.mutations.isEmpty { DebugFaults.pushAnswered() }
            try await write(WriteContext(sync: .upstream)) { batch in try batch.takeIn(answer) }
            outcome = .success(answer)
        } catch {
            outcome = .failure(error)
        }
        replica.note(outcome, pushed: request.mutations.count, time: Date(timeIntervalSince1970: wallClock.now()))
        metrics.syncExchanges[(try? outcome.get()) != nil]?.increment()
        return (try? outcome.get()) != nil
    }

    /// The next request this replica would send (the sim sends it itself).
    package func syncRequest(pushing: Bool, wait: Int? = nil) -> SyncRequest? {
        replica?.request(pushing: pushing, wait: wait, now: wallClock.now())
    }

    /// Takes in the upstream's answer: results, snapshot and changes, in one transaction (the sim
    /// and tests, which exchange by themselves).
    package func takeIn(_ answer: SyncAnswer) async throws {
        try await write(WriteContext(sync: .upstream)) { batch in try batch.takeIn(answer) }
    }

    /// Exchanges with the upstream until the outbox is empty and every change the upstream has
    /// is taken in, or `timeout` passes.
    ///
    /// - Throws: ``PrefsError`` — `unreachable` with the last exchange's error if the upstream
    ///   could not be reached in time; `not_found` for a store that is no replica.
    @discardableResult
    public func syncNow(timeout: Duration) async throws -> SyncStatus {
        guard let replica else { throw PrefsError(.notFound, "This store is no replica: it has no upstream.") }
        guard let transport = replica.transport.withLock({ $0 }) else {
            throw PrefsError(.unreachable, "This replica is not syncing: it was opened without a way to reach its upstream.")
        }
        let deadline = ClockDeadline(in: timeout, on: clock)
        while true {
            let succeeded = await exchange(through: transport, pushing: true, wait: nil)
            let status = replica.status
            if succeeded, status.isInStep { return status }
            guard !deadline.hasPassed else {
                var reason = status.lastExchange?.error ?? "changes still to exchange"
                if reason.hasSuffix(".") { reason.removeLast() }
                throw PrefsError(.unreachable, "Not in step with \(status.upstream) after \(timeout): \(reason).")
            }
            // The pause before trying again, but never past the deadline.
            if !succeeded {
                let (clock, pause) = (clock, replica.pause)
                await deadline.race { try? await clock.sleep(for: pause) }
                try Task.checkCancellation()
            }
        }
    }
}

extension SyncAnswer.Change {
    /// A change of the log as a replica is sent it; nil for one without a key.
    init?(_ change: LoggedChange) {
        guard let key = change.event.key else { return nil }
        self.init(
            revision: change.event.revision, kind: change.event.kind, key: key, scope: change.event.scope,
            value: change.event.value,
            stamp: change.stamp ?? SyncStamp(milliseconds: Int64(change.time * 1000), counter: 0, device: ""),
            author: change.author?.name, reason: change.reason)
    }
}

extension SyncAnswer.DraftState {
    /// Draft `id` as its `versions` from revision `from` through `through` leave it, its text as
    /// steps from `from` where that is shorter; nil unless the versions of `from` and after are
    /// all there.
    init?(_ id: UUID, versions: [DraftVersion], from: Int64, through: Int64) {
        guard let last = versions.last, last.revision == through else { return nil }
        self.init(id: id, revision: through, draft: last.draft)
        let consecutive = versions.count == Int(through - from) + 1 && versions.first?.revision == from
        guard consecutive, let lastDraft = last.draft, versions.allSatisfy({ $0.draft != nil }) else { return }
        let steps = zip(versions, versions.dropFirst()).map { TextSplice(from: $0.draft!.text, to: $1.draft!.text) }
        let stepBytes = steps.reduce(0) { $0 + $1.insert.utf8.count + 32 }
        guard stepBytes < lastDraft.text.utf8.count else { return }
        draft?.text = ""
        text = TextSteps(from: from, steps: steps)
    }
}
