import Foundation
import PrefsEngine
import PrefsKit
import Synchronization
import TestHarness

/// A database in memory that other writers share, as hosts share a PostgreSQL database: the
/// engine's writer runs its batches optimistically and commits them after whatever "other hosts"
/// committed meanwhile — which the test makes happen, exactly when it wants (``othersCommit(_:)``,
/// ``atNextOptimisticCommit(othersCommit:)``, ``deadlockNextCommits(_:)``).
///
/// It keeps preference rows, tokens, the change log and sync's rows only: locks, schemas, drafts
/// and blobs are not written (tests of them run on SQLite and PostgreSQL). Its writer runs on a queue of its own, which a test may
/// hold (``holdWriter()``) to let requests gather into one batch.
final class SharedMemoryStorage: PrefsStorage {
    /// What the database holds, and what the test asked of it.
    struct Database {
        /// Values by key and scope.
        var values: [String: [ScopePath: StoredValue]] = [:]
        /// The change log, in revision order.
        var log: [LoggedChange] = []
        /// The newest revision committed, by anyone.
        var newestRevision: Revision = 0
        /// The oldest revision the change log holds in full: compaction drops the rows before it
        /// but those that set a value stored now.
        var oldestRevision: Revision = 1
        /// What compaction dropped: the newest row dropped of each key, scope (nil: a schema's)
        /// and kind, as `compacted_entry` keeps its revision, time and stamp.
        var compacted: [CompactedEntry: LoggedChange] = [:]
        /// Named tokens, by name.
        var tokens: [String: StoredToken] = [:]
        /// Outcomes of idempotent requests, by key.
        var outcomes: [String: StoredOutcome] = [:]
        /// The highest sequence number taken in from each device.
        var devices: [String: Int64] = [:]
        /// The conflicts sync resolved, by revision.
        var conflicts: [Revision: SyncConflict] = [:]
        /// The replica's record.
        var replicaRecord: ReplicaRecord?
        /// The replica's outbox, by sequence number.
        var outbox: [Int64: SyncRequest.Mutation] = [:]
        /// The replica's bases.
        var bases: [SyncEntry: SyncBase] = [:]
        /// Every batch's attempts, in order: whether each was optimistic.
        var attempts: [Bool] = []
        /// The engine's commits, in order.
        var commits: [Commit] = []
        /// What other writers commit as each coming optimistic commit starts, in order.
        var scripted: [[(key: String, value: JSONValue)]] = []
        /// How many of the coming commits that hold the others off end in a deadlock with one.
        var deadlocks = 0
    }

    /// A key, scope and kind whose rows compaction dropped.
    struct CompactedEntry: Hashable {
        var key: String
        var scope: ScopePath?
        var kind: ChangeEvent.Kind
    }

    /// One of the engine's commits.
    struct Commit: Equatable {
        /// Whether the batch ran without holding other writers off.
        var optimistic: Bool
        /// How many changes it logged.
        var changes: Int
        /// How far its revisions moved past other writers' (nil: it followed none).
        var shift: Revision?
    }

    /// The database, shared by the engine's writer connection and the other "hosts".
    let database = Mutex(Database())
    /// How many times the writer's queue finished a turn.
    let writerTurns = Tally()
    /// How many times the engine read the change log.
    let changeLogReads = Tally()
    /// How many of the engine's filtered reads of the log named the revisions to read.
    let readsByRevision = Tally()
    /// Whether the log refuses to be read by key, as one that cannot be indexed.
    let refusesKeyIndex = Mutex(false)

    private let wakes = Mutex<[@Sendable (Revision?) -> Void]>([])
    private let writerQueue = DispatchQueue(label: "SharedMemoryStorage.writer")
    private let writerLock = NSLock()

    var location: String { "memory" }
    var commitsOnCallingThread: Bool { false }
    var hasOtherWriters: Bool { true }
    var stagingFolder: URL { FileManager.default.temporaryDirectory }

    func loadSnapshot() throws -> StorageSnapshot {
        database.withLock { database in
            StorageSnapshot(
                keys: database.values.mapValues { KeyState(values: $0) }, newestRevision: database.newestRevision,
                oldestRevision: database.oldestRevision, tokens: Array(database.tokens.values),
                replica: ReplicaSnapshot(
                    record: database.replicaRecord, outbox: database.outbox.sorted { $0.key < $1.key }.map(\.value),
                    bases: database.bases))
        }
    }

    func withWriter<T>(_ body: (any WriteConnection) throws -> T) rethrows -> T {
        writerLock.lock()
        defer { writerLock.unlock() }
        return try body(SharedMemoryWriteConnection(storage: self))
    }

    func asyncWithWriter(_ body: @escaping @Sendable (any WriteConnection) -> Void) {
        writerQueue.async {
            self.withWriter(body)
            self.writerTurns.increment()
        }
    }

    func observeCommitsElsewhere(_ wake: @escaping @Sendable (Revision?) -> Void) {
        wakes.withLock { $0.append(wake) }
    }

    func changeLog(after revision: Revision, through: Revision, limit: Int) async throws -> ChangeLogPage {
        defer { changeLogReads.increment() }
        return database.withLock { database in
            ChangeLogPage(
                changes: Array(database.log.filter { $0.event.revision > revision && $0.event.revision <= through }.prefix(limit)),
                oldestRevision: database.oldestRevision)
        }
    }

    /// The log's rows the filter's key, prefix, subtree, scopes, reach, kinds and revisions select
    /// (the SQL storages' other filters are theirs to test).
    func changeLog(matching filter: ChangeLogFilter, limit: Int) async throws -> ChangeLogPage {
        database.withLock { database in
            let rows = database.log.filter { change in
                let event = change.event
                return Self.selects(filter, key: event.key, scope: event.scope, kind: event.kind)
                    && (filter.notFromDevice.map { event.kind != .set || change.stamp?.device != $0 } ?? true)
                    && (filter.after.map { event.revision > $0 } ?? true) && (filter.through.map { event.revision <= $0 } ?? true)
                    && (filter.revisions.map { $0.contains(event.revision) } ?? true)
            }
            if filter.revisions != nil { readsByRevision.increment() }
            return ChangeLogPage(
                changes: Array((filter.newestFirst ? rows.reversed() : rows).prefix(limit)), oldestRevision: database.oldestRevision)
        }
    }

    /// The newest revision compaction dropped among the entries the filter selects, as the SQL
    /// storages read `compacted_entry`.
    func keyedRevisions(after revision: Revision, through: Revision, limit: Int) async throws -> [KeyedRevision] {
        if refusesKeyIndex.withLock({ $0 }) { throw PrefsError(.unavailable, "The log cannot be read by key.") }
        return database.withLock { database in
            Array(
                database.log.lazy.filter { $0.event.revision > revision && $0.event.revision <= through }
                    .compactMap { change in
                        change.event.key.map { KeyedRevision(key: $0, revision: change.event.revision, isSchema: change.event.kind == .schema) }
                    }
                    .prefix(limit))
        }
    }

    func newestCompactedAway(matching filter: ChangeLogFilter) async throws -> Revision {
        database.withLock { database in
            database.compacted.filter { Self.selects(filter, key: $0.key.key, scope: $0.key.scope, kind: $0.key.kind) }
                .values.map(\.event.revision).max() ?? 0
        }
    }

    /// Whether the filter's key, prefix, subtree, scopes, reach and kinds select a row of `key`
    /// (nil: a draft's or a token's) at `scope` (nil: none, a schema's) of `kind`, as the SQL
    /// storages' conditions do.
    static func selects(_ filter: ChangeLogFilter, key: String?, scope: ScopePath?, kind: ChangeEvent.Kind) -> Bool {
        (filter.key.map { key == $0 } ?? true) && (filter.prefix.map { key?.hasPrefix($0) == true } ?? true)
            && (filter.subtree.map { subtree in scope.map(subtree.contains) ?? false } ?? true)
            && (filter.scopes.map { scopes in scope.map(scopes.contains) ?? true } ?? true)
            && (filter.reach.map { reach in scope.map { reach.contains($0) || $0.contains(reach) } ?? (key != nil) } ?? true)
            && (filter.kinds.map { $0.contains(kind) } ?? true)
    }

    /// The conflicts the query selects, as the SQL storages select them.
    func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict] {
        database.withLock { database in
            let selected = database.conflicts.values.sorted { $0.revision < $1.revision }.filter { conflict in
                (query.subtree.map { $0.contains(conflict.scope) } ?? true) && (query.key.map { conflict.key == $0 } ?? true)
                    && (query.after.map { conflict.revision > $0 } ?? true) && (query.from.map { conflict.time.timeIntervalSince1970 >= $0 } ?? true)
            }
            return Array((query.newestFirst ? selected.reversed() : selected).prefix(query.limit))
        }
    }

    func tokens() async throws -> [StoredToken] {
        database.withLock { Array($0.tokens.values) }
    }

    func recordTokenUse(_ lastUsed: [String: Double]) async throws {}

    func newestRevision() async throws -> Revision {
        database.withLock { $0.newestRevision }
    }

    func draft(_ id: UUID) async throws -> Draft? { nil }

    func drafts(account: String?, thread: String?) async throws -> [Draft] { [] }

    func draftVersions(of id: UUID, from: Int64, through: Int64) async throws -> [DraftVersion] { [] }

    func openBlob(_ sha256: String) async throws -> (any BlobReading)? { nil }

    func blobSize(sha256: String) async throws -> Int64? { nil }

    func blobUsers(sha256: String) async throws -> BlobUsers { BlobUsers() }

    func blobUpload(sha256: String, uploader: String) async throws -> BlobUpload? { nil }

    func close() {}

    // MARK: What the test looks at

    /// Every batch's attempts so far, in order: whether each was optimistic.
    var attempts: [Bool] { database.withLock { $0.attempts } }
    /// The engine's commits so far, in order.
    var commits: [Commit] { database.withLock { $0.commits } }
    /// The revisions in the change log, in order.
    var loggedRevisions: [Revision] { database.withLock { $0.log.map(\.event.revision) } }

    /// The value stored for `key` at the root scope.
    func storedValue(_ key: String) -> StoredValue? {
        database.withLock { $0.values[key]?[.root] }
    }

    // MARK: What the test makes happen

    /// Keeps the writer's queue from starting a turn until ``releaseWriter()``.
    func holdWriter() {
        writerQueue.suspend()
    }

    /// Lets the writer's queue run again.
    func releaseWriter() {
        writerQueue.resume()
    }

    /// Another host sets each key to its value at the root scope, one revision each; with
    /// `notifying`, it announces the newest to the engine, as PostgreSQL's `NOTIFY` would.
    ///
    /// - Returns: The revision of the last change.
    @discardableResult
    func othersCommit(_ writes: [(key: String, value: JSONValue)], notifying: Bool = false) -> Revision {
        let newest = database.withLock { database in
            Self.commitElsewhere(writes, in: &database)
            return database.newestRevision
        }
        if notifying {
            for wake in wakes.withLock({ $0 }) { wake(newest) }
        }
        return newest
    }

    /// Another host commits `writes` just as the engine's next optimistic batch commits: after
    /// the batch began, before its commit.
    func atNextOptimisticCommit(othersCommit writes: [(key: String, value: JSONValue)]) {
        database.withLock { $0.scripted.append(writes) }
    }

    /// Makes the next `count` commits of batches that hold the others off end in a deadlock with
    /// another writer (on PostgreSQL, over a row both write at once), as the database breaks one:
    /// nothing is written, and the batch may run again.
    func deadlockNextCommits(_ count: Int) {
        database.withLock { $0.deadlocks = count }
    }

    /// Another host compacts the change log to keep `oldest` and the revisions after it, and the
    /// rows that set a value stored now; it announces nothing (its next change will).
    func othersCompact(keepingFrom oldest: Revision) {
        database.withLock { Self.compact(&$0, keepingFrom: oldest) }
    }

    /// Drops the log's rows before `oldest` but those that set a value stored now, as the SQL
    /// storages' compaction does, noting what it dropped of each entry.
    static func compact(_ database: inout Database, keepingFrom oldest: Revision) {
        let stored = Set(database.values.values.flatMap { $0.values.map(\.revision) })
        let dropped = { (change: LoggedChange) in change.event.revision < oldest && !stored.contains(change.event.revision) }
        for change in database.log where dropped(change) {
            guard let key = change.event.key else { continue }
            let entry = CompactedEntry(key: key, scope: change.event.scope, kind: change.event.kind)
            if change.event.revision > database.compacted[entry]?.event.revision ?? 0 { database.compacted[entry] = change }
        }
        database.log.removeAll(where: dropped)
        database.oldestRevision = oldest
    }

    /// Logs `writes` as another writer's changes, each with the value it replaced, as the SQL
    /// storages log them.
    static func commitElsewhere(_ writes: [(key: String, value: JSONValue)], in database: inout Database) {
        for write in writes {
            database.newestRevision += 1
            let replaced = database.values[write.key]?[.root]
            database.values[write.key, default: [:]][.root] = StoredValue(value: write.value, revision: database.newestRevision)
            database.log.append(
                LoggedChange(
                    event: ChangeEvent(revision: database.newestRevision, kind: .set, key: write.key, scope: .root, value: write.value),
                    oldValue: replaced?.value.canonicalText, oldRevision: replaced?.revision))
        }
    }
}
