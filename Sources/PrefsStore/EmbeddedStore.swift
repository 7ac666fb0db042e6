import Foundation
import GRDB
import Synchronization
import PrefsKit

/// The preferences store in this process: a SQLite database (through GRDB) that this store
/// owns, an in-memory cache every read is served from, a group-commit writer every write goes
/// through, and a hub that tells watchers about each committed change.
///
/// ```swift
/// let store = try EmbeddedStore(path: "/tmp/prefs.sqlite")
/// try await store.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
/// let resolved = try await store.resolve("timeline.fontSize", scope: "/accounts/alice/threads/42")
/// resolved.source   // .scope("/accounts/alice")
/// ```
///
/// One store per database file: a second `EmbeddedStore` or `prefsd` on the same file fails at
/// once with `conflict`, naming the owner's pid. `prefsd` is this store behind an HTTP server.
public final class EmbeddedStore: ImmediateResolving, EndableWatching, FeedWatching, CompletionWriting {
    /// The database file.
    public let path: String
    /// How the store was opened.
    public let configuration: StoreConfiguration

    let pool: DatabasePool
    let cache: PreferenceCache
    let hub: WatchHub
    let writer: GroupCommitWriter
    /// The blobs downloads are reading.
    let blobHolds = BlobHolds()
    private let ownership: DatabaseOwnership
    private let openedAt = ContinuousClock.now
    private let lifecycle = Mutex(Lifecycle())
    private let temporaryDirectory: URL?

    private struct Lifecycle: ~Copyable {
        var closed = false
        var progressTask: Task<Void, Never>?
    }

    /// Opens (creating and migrating if needed) the database at `path` and claims it.
    ///
    /// Throws ``PrefsError`` if another process owns the database, or if the file is not a
    /// SQLite database, is corrupt, or comes from a newer prefsd — in those cases the file is
    /// left untouched.
    public convenience init(path: String, configuration: StoreConfiguration = StoreConfiguration()) throws {
        try self.init(path: path, configuration: configuration, temporaryDirectory: nil)
    }

    /// A store on a new database in a temporary folder, removed when the store closes: for tests.
    public static func temporary(configuration: StoreConfiguration = StoreConfiguration()) throws -> EmbeddedStore {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-\(UUID().uuidString)")
        do {
            return try EmbeddedStore(
                path: folder.appending(path: "prefs.sqlite").path, configuration: configuration, temporaryDirectory: folder)
        } catch {
            // A store that could not open (a bad configuration) leaves no folder behind.
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    private init(path: String, configuration: StoreConfiguration, temporaryDirectory: URL?) throws {
        self.path = path
        self.configuration = configuration
        self.temporaryDirectory = temporaryDirectory
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        ownership = try DatabaseOwnership(databasePath: path)
        // Uploads staged beside the database by a process that died midway: no one else can be
        // writing them now that this store owns the database.
        try? FileManager.default.removeItem(at: Self.uploadsFolder(of: path))
        pool = try StoreDatabase.open(path: path, durability: configuration.durability)
        // Bytes a download held when the process that ran it ended.
        try pool.write { db in try DraftRecords.freeUnusedBlobs(db) }
        let (keys, bounds) = try pool.read { db in (try PreferenceRecords.loadAll(db), try ChangeLog.bounds(db)) }
        for (key, value) in configuration.overrides {
            try KeyName.validate(key)
            try configuration.rules.checkValue(value, for: key, schema: keys[key]?.schema)
        }
        let cache = PreferenceCache(keys: keys, revision: bounds.current, oldestRevision: bounds.oldest)
        let hub = WatchHub(revision: bounds.current, limit: configuration.maximumWatches)
        let retain = configuration.retainChanges
        let rules = configuration.rules
        let overrides = configuration.overrides
        let blobHolds = blobHolds
        self.cache = cache
        self.hub = hub
        writer = GroupCommitWriter(
            pool: pool,
            hooks: .init(
                makeContext: { db in
                    WriteContext(
                        db: db, cache: cache, rules: rules, overrides: overrides, time: Date().timeIntervalSince1970,
                        blobHolds: blobHolds)
                },
                finishTransaction: { context in
                    context.oldestRevision = try ChangeLog.compact(
                        context.db, revision: context.revision, retain: retain, oldest: context.oldestRevision)
                },
                didCommit: { context in
                    cache.publish(context.touched, revision: context.revision, oldestRevision: context.oldestRevision)
                    hub.publish(context.changes, revision: context.revision)
                }
            )
        )
        startProgressEvents()
    }

    deinit {
        close()
    }

    /// Ends every watch (with a final `shutdown` event), waits for queued writes, checkpoints
    /// the WAL into the database and releases it, so another store or daemon may open it. Further calls fail with `shutting_down`.
    public func close() {
        let task: Task<Void, Never>?? = lifecycle.withLock { lifecycle in
            guard !lifecycle.closed else { return nil }
            lifecycle.closed = true
            return lifecycle.progressTask
        }
        guard let task else { return }
        task?.cancel()
        hub.close()
        writer.close()
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? pool.close()
        ownership.release()
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// ``close()`` for async code: the same work, done on a thread of its own, so waiting for
    /// queued writes and the checkpoint never holds a thread of the concurrency pool (which
    /// those very writes, or other tasks, may need to finish).
    ///
    /// Not an `async` overload of `close()`: in async code that would make every existing
    /// `store.close()` an error until awaited.
    public func closeWithoutBlocking() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                self.close()
                done.resume()
            }.start()
        }
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

    /// Where uploads are staged until they are whole: a folder beside the database.
    var uploadsFolder: URL { Self.uploadsFolder(of: path) }

    private static func uploadsFolder(of databasePath: String) -> URL {
        URL(fileURLWithPath: databasePath + ".uploads")
    }

    /// Runs `work` as one atomic request of the next group commit.
    func write<T: Sendable>(_ work: @escaping @Sendable (WriteContext) throws -> T) async throws -> T {
        try ensureOpen()
        return try await writer.submit(work)
    }

    /// Throws `shutting_down` once the store is closed.
    func ensureOpen() throws {
        guard !lifecycle.withLock({ $0.closed }) else {
            throw PrefsError(.shuttingDown, "The store is closed; the change was not stored.")
        }
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
            version: prefsVersion, database: path, revision: counts.4, oldestRevision: counts.5,
            uptimeSeconds: Double((ContinuousClock.now - openedAt).components.seconds)
                + Double((ContinuousClock.now - openedAt).components.attoseconds) / 1e18,
            pid: getpid(),
            counts: .init(
                keys: counts.0, values: counts.1, locks: counts.2, schemas: counts.3,
                overrides: configuration.overrides.count, watchers: hub.count)
        )
    }

    public func resolve(_ key: String, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        try KeyName.validate(key)
        return resolveNow(key, scope: scope, explain: explain)
    }

    public var committedRevision: Revision {
        cache.read { $0.revision }
    }

    /// Resolves from the cache, synchronously: no SQL, no suspension.
    public func resolveNow(_ key: String, scope: ScopePath, explain: Bool = false) -> ResolvedPreference {
        let override = configuration.overrides[key]
        if !explain, override == nil {
            let (effective, revision) = cache.effectiveValue(of: key, at: scope)
            return ResolvedPreference(
                key: key, scope: scope, value: effective.value ?? .null, source: effective.source, revision: revision)
        }
        return cache.read { snapshot in
            PreferenceResolver.resolve(
                key: key, at: scope, state: snapshot.keys[key], override: override, revision: snapshot.revision,
                explain: explain)
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
