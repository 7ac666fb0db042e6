import CoreMetrics
import Foundation
import Logging
import PrefsKit
import Synchronization

/// The preferences-and-drafts service over a storage: an in-memory cache every read is served
/// from, a group-commit writer every write goes through, and a hub that tells watchers about each
/// committed change — the same engine whatever database lies under it.
///
/// Applications meet it as `EmbeddedStore` (SQLite in this process, from `PrefsStore`) or
/// `PostgresStore` (a PostgreSQL database shared by several hosts, from `PrefsPostgres`):
///
/// ```swift
/// let store = try EmbeddedStore(path: "/tmp/prefs.sqlite")
/// try await store.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
/// let resolved = try await store.resolve("timeline.fontSize", scope: "/accounts/alice/threads/42")
/// resolved.source   // .scope("/accounts/alice")
/// ```
///
/// `prefsd` is an engine behind an HTTP server.
///
/// `Storage` names the kind of database (`SQLiteStorage`, `PostgresStorage`); the storage itself
/// is the engine's alone, out of an application's reach, so that every write passes the engine's
/// rules, cache, change log and watchers.
public final class PrefsEngine<Storage>: PrefsService, EngineServing {
    /// The database under the engine.
    package let storage: any PrefsStorage
    /// How the engine was set up.
    public let configuration: StoreConfiguration

    let cache: PreferenceCache
    let hub: WatchHub
    /// What the engine measures.
    let metrics: EngineMetrics
    let writer: GroupCommitWriter
    /// Takes committed changes, whoever committed them, into the cache and the hub.
    let intake: ChangeIntake
    /// Gives the key index back what other hosts' compactions kept.
    let keptRevisions: KeptRevisionsRestorer
    /// The named tokens, as of the newest revision taken in.
    let tokens: AccessTokens
    /// The store's life as a replica of an upstream; nil for a store that is none.
    let replica: SyncReplica?
    /// The hashes of blob uploads under way, so far (``uploadBlob(_:offset:length:grant:bytes:)``).
    let uploadDigests = UploadDigests()
    /// Whether a catch-up with other writers' changes runs (``catchUp()``).
    let catchingUp = Mutex(CatchUpState())
    /// Where the engine reports what it cannot tell a caller.
    let logger = Logger(label: "prefsd")
    /// What measures the engine's short waits (the writer's straggler window, the catch-up
    /// grace): `ContinuousClock` but in tests, which move it by hand.
    let clock: any Clock<Duration>
    /// What tells the time of day changes record and retentions are measured by.
    let wallClock: WallClock
    private let openedAt = ContinuousClock.now
    /// This host's name, which its changes record, where other hosts write to the database too.
    private let host: String?
    private let lifecycle = Mutex(Lifecycle())

    private struct Lifecycle: ~Copyable {
        var closed = false
        var progressTask: Task<Void, Never>?
        var tokenUseTask: Task<Void, Never>?
        var keyIndexTask: Task<Void, Never>?
    }

    /// An engine over `storage`, loading what the engine keeps in memory from it on the calling
    /// thread.
    ///
    /// - Parameters:
    ///   - storage: The database under the engine.
    ///   - configuration: How the engine is set up.
    ///   - clock: What measures the engine's short waits; tests pass one they move by hand.
    ///   - wallClock: What tells the time of day; tests pass one they set by hand.
    /// - Throws: ``PrefsError`` if an override breaks its key's name or schema, or as
    ///   ``PrefsStorage/loadSnapshot()`` does.
    package convenience init(
        storage: Storage, configuration: StoreConfiguration, clock: any Clock<Duration> = ContinuousClock(),
        wallClock: WallClock = .system
    ) throws where Storage: PrefsStorage {
        try self.init(
            storage: storage, snapshot: storage.loadSnapshot(), configuration: configuration, clock: clock, wallClock: wallClock)
    }

    /// An engine over `storage`, starting from `snapshot`, which the storage has just loaded.
    ///
    /// - Parameters:
    ///   - storage: The database under the engine.
    ///   - snapshot: What the engine keeps in memory, as the storage holds it now.
    ///   - configuration: How the engine is set up.
    ///   - clock: What measures the engine's short waits; tests pass one they move by hand.
    ///   - wallClock: What tells the time of day; tests pass one they set by hand.
    /// - Throws: ``PrefsError`` if an override breaks its key's name or schema.
    package init(
        storage: Storage, snapshot: StorageSnapshot, configuration: StoreConfiguration,
        clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system
    ) throws where Storage: PrefsStorage {
        self.storage = storage
        self.configuration = configuration
        self.clock = clock
        self.wallClock = wallClock
        host = storage.hasOtherWriters ? ProcessInfo.processInfo.hostName : nil
        for (key, value) in configuration.overrides {
            try KeyName.validate(key)
            try configuration.rules.checkValue(value, for: key, schema: snapshot.keys[key]?.schema)
        }
        let cache = PreferenceCache(
            keys: snapshot.keys, revision: snapshot.newestRevision, oldestRevision: snapshot.oldestRevision)
        let hub = WatchHub(revision: snapshot.newestRevision, limit: configuration.maximumWatches)
        let compaction = ChangeLogCompaction(retain: configuration.retainChanges, retainFor: configuration.retainFor)
        let rules = configuration.rules
        let overrides = configuration.overrides
        // Only where other writers run alongside does a batch need to say what it read.
        let tracksKeysRead = storage.hasOtherWriters
        let tokens = AccessTokens(snapshot.tokens)
        let intake = ChangeIntake(
            cache: cache, hub: hub, tokens: tokens, keyRevisions: KeyRevisions(start: snapshot.newestRevision))
        let keptRevisions = KeptRevisionsRestorer(
            storage: storage, index: intake.keyRevisions, applied: { cache.read { $0.revision } }, logger: Logger(label: "prefsd"))
        let prunings = [
            RetentionPruning(retention: configuration.idempotencyRetention) { try $0.pruneOutcomes(storedBefore: $1) },
            RetentionPruning(retention: configuration.blobUploadRetention) { try $0.pruneBlobUploads(before: $1) },
        ]
        let metrics = EngineMetrics(factory: configuration.metricsFactory)
        let replica = (configuration.upstream ?? snapshot.replica.record?.upstream).map {
            SyncReplica(ReplicaState(snapshot.replica, upstream: $0))
        }
        self.replica = replica
        self.metrics = metrics
        self.cache = cache
        self.hub = hub
        self.intake = intake
        self.keptRevisions = keptRevisions
        self.tokens = tokens
        writer = GroupCommitWriter(
            storage: storage, metrics: metrics,
            hooks: .init(
                appliedRevision: { cache.read { $0.revision } },
                applyCommittedElsewhere: { page in try Self.takeCommittedElsewhere(page, intake: intake, keptRevisions: keptRevisions) },
                makeBatch: { connection in
                    WriteBatch(
                        connection: connection, cache: cache, tokens: tokens, rules: rules, overrides: overrides,
                        time: wallClock.now(), tracksKeysRead: tracksKeysRead, replica: replica)
                },
                finishTransaction: { batch in
                    for pruning in prunings { try pruning.pruneIfDue(batch) }
                    batch.oldestRevision = try compaction.compact(
                        batch.connection, revision: batch.revision, oldest: batch.oldestRevision, time: batch.time)
                },
                didCommit: { batch in
                    DebugFaults.batchCommitted()
                    if let changes = batch.replica { replica?.publish(changes) }
                    intake.publish(batch)
                }
            ),
            clock: clock
        )
        startProgressEvents()
        let tokenUse = recordTokenUse(every: configuration.tokenUseInterval)
        let keyIndex = rebuildKeyRevisions()
        lifecycle.withLock { lifecycle in
            lifecycle.tokenUseTask = tokenUse
            lifecycle.keyIndexTask = keyIndex
        }
        storage.observeCommitsElsewhere { [weak self] announced in self?.catchUp(toReach: announced) }
    }

    deinit {
        // Never waits: the last reference may be dropped on a thread of the concurrency pool,
        // which must not be held while queued writes finish. The storage is released shortly
        // after, on a thread of its own; `close()` is what says when.
        guard let transport = stopServing() else { return }
        if let transport { Task { await transport.shutdown() } }
        let storage = storage
        Thread { storage.close() }.start()
    }

    /// Ends every watch (with a final `shutdown` event), waits for queued writes, and releases the
    /// storage, so another engine may open it. Further calls fail with `shutting_down`.
    ///
    /// The wait is on a thread of its own, never on one of the concurrency pool (which the
    /// writes being finished, or other tasks, may need): call it from any async code. An engine
    /// dropped without it closes too, but without saying when its storage is free again.
    public func close() async {
        guard let transport = stopServing() else { return }
        await transport?.shutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread { [storage] in
                storage.close()
                done.resume()
            }.start()
        }
    }

    /// Marks the engine closed, stops its periodic tasks and its sync, and ends its watches; nil
    /// if it was closed already, else the transport sync used (if any), to shut down.
    private func stopServing() -> (any SyncTransport)?? {
        let tasks: [Task<Void, Never>?]? = lifecycle.withLock { lifecycle in
            guard !lifecycle.closed else { return nil }
            lifecycle.closed = true
            return [lifecycle.progressTask, lifecycle.tokenUseTask, lifecycle.keyIndexTask]
        }
        guard let tasks else { return nil }
        for task in tasks { task?.cancel() }
        keptRevisions.close()
        let transport = replica?.stop()
        hub.close()
        return .some(transport)
    }

    /// Waits until the key index's rebuild (``rebuildKeyRevisions()``) has ended, and returns
    /// whether the index is complete — false if the rebuild gave up, the log unreadable.
    @discardableResult
    package func keyIndexRebuilt() async -> Bool {
        await lifecycle.withLock { $0.keyIndexTask }?.value
        return intake.keyRevisions.isComplete
    }

    /// Waits until the key index has read back what the other hosts' compactions taken in kept
    /// (``KeptRevisionsRestorer``).
    package func keyIndexSettled() async {
        await keptRevisions.settled()
    }

    /// Takes in `page`, changes other writers committed, and has the key index read back what a
    /// compaction among them kept.
    static func takeCommittedElsewhere(_ page: ChangeLogPage, intake: ChangeIntake, keptRevisions: KeptRevisionsRestorer) throws {
        if let previous = try intake.take(page) { keptRevisions.compacted(from: previous) }
    }

    /// Ends every open watch with a final `shutdown` event and refuses new ones; writes and reads
    /// go on. A daemon calls it when it starts to stop, so streams end before the server drains.
    public func endWatches() {
        hub.close()
    }

    private func startProgressEvents() {
        let interval = configuration.progressInterval
        let task = Task { [hub] in
            // Until cancelled: a sleep cut short by close() sends no last progress event, which
            // could otherwise slip in before the watches' `shutdown`.
            while (try? await Task.sleep(for: interval)) != nil {
                hub.sendProgress()
            }
        }
        lifecycle.withLock { $0.progressTask = task }
    }

    /// Runs `work` as one atomic request of the next group commit, made in `context` — once only,
    /// if the context carries an `Idempotency-Key`.
    func write<T: Sendable>(_ context: WriteContext, _ work: @escaping @Sendable (WriteBatch) throws -> T) async throws -> T {
        try ensureOpen()
        return try await writer.submit(work, context: recorded(context))
    }

    /// `context` as its changes record it: its author — the store's configured one if it names
    /// none — with this host's name where several hosts share the database, and its reason;
    /// no author or reason where the store records none.
    func recorded(_ context: WriteContext) -> WriteContext {
        var recorded = context
        guard configuration.recordsAuthors else {
            recorded.origin = ChangeOrigin()
            return recorded
        }
        var author = context.origin.author ?? configuration.author
        if author.host == nil { author.host = host }
        recorded.origin.author = author
        return recorded
    }

    /// Throws `shutting_down` once the engine is closed.
    func ensureOpen() throws {
        guard !lifecycle.withLock({ $0.closed }) else {
            throw PrefsError(.shuttingDown, "The store is closed; the change was not stored.")
        }
    }

    /// Brings the engine's gauges up to date (open watches, the change log's size, the revision
    /// taken in and, on a database other hosts write to, how far behind it is): before metrics
    /// are read.
    package func refreshMetrics() async {
        let (revision, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
        metrics.openWatches.record(hub.count)
        metrics.changeLogSize.record(max(0, revision - oldest + 1))
        metrics.appliedRevision.record(revision)
        if let status = replica?.status {
            metrics.syncOutbox.record(status.outbox)
            metrics.syncLag.record(max(0, (status.upstreamRevision ?? status.cursor) - status.cursor))
        }
        guard storage.hasOtherWriters, let newest = try? await storage.newestRevision() else { return }
        metrics.revisionsBehind.record(max(0, newest - revision))
    }

    // MARK: - Reads

    public func status() async throws -> ServiceStatus {
        let counts = cache.read { snapshot in
            var values = 0
            var locks = 0
            var schemas = 0
            for state in snapshot.keys.values {
                values += state.values.count
                locks += state.locks.count
                if state.schema != nil { schemas += 1 }
            }
            return (snapshot.keys.count, values, locks, schemas, snapshot.revision, snapshot.oldestRevision)
        }
        return ServiceStatus(
            version: prefsVersion, database: storage.location, revision: counts.4, oldestRevision: counts.5,
            uptimeSeconds: Double((ContinuousClock.now - openedAt).components.seconds)
                + Double((ContinuousClock.now - openedAt).components.attoseconds) / 1e18,
            pid: getpid(),
            counts: .init(
                keys: counts.0, values: counts.1, locks: counts.2, schemas: counts.3,
                overrides: configuration.overrides.count, watchers: hub.count),
            sync: replica?.status
        )
    }

    public func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        resolveNow(key, scope: scope, explain: explain)
    }

    package var recordsAuthors: Bool {
        configuration.recordsAuthors
    }

    package var committedRevision: Revision {
        cache.read { $0.revision }
    }

    /// Resolves from the cache, synchronously: no SQL, no suspension.
    package func resolveNow(_ key: KeyName, scope: ScopePath, explain: Bool = false) -> ResolvedPreference {
        resolveNowWithRevision(key, scope: scope, explain: explain).resolved
    }

    package func resolveNowWithRevision(_ name: KeyName, scope: ScopePath, explain: Bool)
        -> (resolved: ResolvedPreference, revisionHere: Revision)
    {
        let key = name.rawValue
        let override = configuration.overrides[key]
        if !explain, override == nil {
            let (effective, revisionHere, revision) = cache.effectiveValue(of: key, at: scope)
            let resolved = ResolvedPreference(
                key: key, scope: scope, value: effective.value ?? .null, source: effective.source, revision: revision)
            return (resolved, revisionHere)
        }
        return cache.read { snapshot in
            let state = snapshot.keys[key]
            let resolved = PreferenceResolver.resolve(
                key: key, at: scope, state: state, override: override, revision: snapshot.revision, explain: explain)
            return (resolved, state?.revision(at: scope) ?? 0)
        }
    }

    public func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference] {
        let overrides = configuration.overrides
        return cache.read { snapshot in
            var names = Set(snapshot.keys.keys)
            names.formUnion(overrides.keys)
            return names.filter { prefix == nil || $0.hasPrefix(prefix!) }.sorted().compactMap { key in
                let resolved = PreferenceResolver.resolve(
                    key: key, at: scope, state: snapshot.keys[key], override: overrides[key],
                    revision: snapshot.revision)
                return resolved.isSet ? resolved : nil
            }
        }
    }

    public func schemas() async throws -> [String: PreferenceSchema] {
        cache.read { snapshot in snapshot.keys.compactMapValues(\.schema) }
    }

    public func dump(scope: ScopePath) async throws -> PrefsDump {
        cache.read { snapshot in
            PrefsDump(subtree: scope, keys: snapshot.keys.lazy.map { (key: $0.key, state: $0.value) })
        }
    }
}
