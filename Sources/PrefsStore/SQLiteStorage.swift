import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit
import Synchronization

/// A SQLite database (through GRDB) that one process owns: the storage under ``EmbeddedStore``
/// and a `prefsd` started with `--db`. An application names the type (`EmbeddedStore` is
/// `PrefsEngine<SQLiteStorage>`) but never holds one: its members are the engine's alone.
///
/// WAL mode, a `BEGIN IMMEDIATE` writer, `busy_timeout`, and `synchronous` as the configuration's
/// durability says. One owner per database file: a second storage on the same file fails at once
/// with `conflict`, naming the owner's pid — so no other writer ever commits, and the engine never
/// has changes to take in.
public final class SQLiteStorage: PrefsStorage {
    /// The database file.
    package let path: String

    let pool: DatabasePool
    /// The blobs downloads are reading, which removing their last attachment does not free.
    let blobHolds = BlobHolds()
    private let ownership: DatabaseOwnership
    /// A folder removed when the storage closes (a temporary store's).
    private let temporaryDirectory: URL?
    /// Whether a checkpoint is scheduled (``scheduleCheckpoint()``).
    private let checkpointScheduled = Atomic<Bool>(false)
    /// How many frames the WAL held after the last commit.
    private let walFrames: WALFrameCount
    /// Whether the storage has closed (``close()``).
    private let closed = Atomic<Bool>(false)

    /// Opens (creating and migrating if needed) the database at `path` and claims it.
    ///
    /// Throws ``PrefsError`` if another process owns the database, or if the file is not a
    /// SQLite database, is corrupt, or comes from a newer prefsd — in those cases the file is
    /// left untouched. With a `temporaryDirectory`, that folder is removed when the storage closes.
    package init(path: String, durability: StoreConfiguration.Durability, temporaryDirectory: URL? = nil) throws {
        self.path = path
        self.temporaryDirectory = temporaryDirectory
        try FileManager.default.createDirectory(
            at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        ownership = try DatabaseOwnership(databasePath: path)
        // Uploads staged beside the database by a process that died midway: no one else can be
        // writing them now that this storage owns the database.
        try? FileManager.default.removeItem(at: Self.stagingFolder(of: path))
        walFrames = WALFrameCount()
        pool = try StoreDatabase.open(path: path, durability: durability, walFrames: walFrames)
        // Bytes a download held when the process that ran it ended.
        try pool.write { db in try DraftRecords.freeUnusedBlobs(db) }
    }

    package var location: String { path }

    /// This process owns the database.
    package var hasOtherWriters: Bool { false }

    package var commitsOnCallingThread: Bool { true }

    /// Uploads are staged in a folder beside the database: `<db>.uploads/`.
    package var stagingFolder: URL { Self.stagingFolder(of: path) }

    private static func stagingFolder(of databasePath: String) -> URL {
        URL(fileURLWithPath: databasePath + ".uploads")
    }

    package func loadSnapshot() throws -> StorageSnapshot {
        try pool.read { db in
            let bounds = try ChangeLogRecords.bounds(db)
            var builder = StorageSnapshot.Builder(keyCount: try Int.fetchOne(db, sql: "SELECT count(*) FROM preference") ?? 0)
            try PreferenceRecords.loadAll(db, into: &builder)
            for token in try AccessTokenRecords.fetchAll(db) { builder.addToken(token) }
            builder.replica = try SyncRecords.loadReplica(db)
            return builder.snapshot(newestRevision: bounds.current, oldestRevision: bounds.oldest)
        }
    }

    package func withWriter<T>(_ body: (any WriteConnection) throws -> T) rethrows -> T {
        // GRDB's writer runs the closure on the calling thread once the connection is free.
        try withoutActuallyEscaping(body) { body in
            try pool.writeWithoutTransaction { db in try body(SQLiteWriteConnection(db: db, storage: self)) }
        }
    }

    package func asyncWithWriter(_ body: @escaping @Sendable (any WriteConnection) -> Void) {
        pool.asyncWriteWithoutTransaction { db in body(SQLiteWriteConnection(db: db, storage: self)) }
    }

    package func observeCommitsElsewhere(_ wake: @escaping @Sendable (_ announced: Revision?) -> Void) {
        // This process owns the database: no one else commits.
    }

    package func changeLog(after revision: Revision, through: Revision, limit: Int) async throws -> ChangeLogPage {
        try await pool.read { db in try ChangeLogRecords.page(db, after: revision, through: through, limit: limit) }
    }

    package func changeLog(matching filter: ChangeLogFilter, limit: Int) async throws -> ChangeLogPage {
        try await pool.read { db in try ChangeLogRecords.page(db, matching: filter, limit: limit) }
    }

    package func keyedRevisions(after revision: Revision, through: Revision, limit: Int) async throws -> [KeyedRevision] {
        try await pool.read { db in try ChangeLogRecords.keyedRevisions(db, after: revision, through: through, limit: limit) }
    }

    package func newestCompactedAway(matching filter: ChangeLogFilter) async throws -> Revision {
        try await pool.read { db in try ChangeLogRecords.newestCompactedAway(db, matching: filter) }
    }

    package func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict] {
        try await pool.read { db in try SyncRecords.conflicts(db, query) }
    }

    package func tokens() async throws -> [StoredToken] {
        try await pool.read { db in try AccessTokenRecords.fetchAll(db) }
    }

    package func recordTokenUse(_ lastUsed: [String: Double]) async throws {
        try await pool.write { db in try AccessTokenRecords.recordUse(db, lastUsed) }
    }

    package func newestRevision() async throws -> Revision {
        try await pool.read { db in try ChangeLogRecords.bounds(db).current }
    }

    package func draft(_ id: UUID) async throws -> Draft? {
        try await pool.read { db in try DraftRecords.fetch(db, id: id) }
    }

    package func drafts(account: String?, thread: String?) async throws -> [Draft] {
        try await pool.read { db in try DraftRecords.fetchAll(db, account: account, thread: thread) }
    }

    package func draftVersions(of id: UUID, from: Int64, through: Int64) async throws -> [DraftVersion] {
        try await pool.read { db in try DraftSyncRecords.draftVersions(db, of: id, from: from, through: through) }
    }

    /// Holds the blob, in a write so that no removal can slip between finding it and holding it:
    /// a removal committed before is seen (nil), one after finds the hold and leaves the bytes.
    package func openBlob(_ sha256: String) async throws -> (any BlobReading)? {
        let (pool, holds) = (pool, blobHolds)
        return try await pool.write { db -> SQLiteBlobReader? in
            guard let chunkCount = try DraftRecords.chunkCount(db, sha256: sha256) else { return nil }
            let hold = BlobHold(sha256, in: holds) { sha256 in
                _ = try? await pool.write { db in
                    guard !holds.isHeld(sha256) else { return }
                    try DraftRecords.freeBlobIfUnused(db, sha256: sha256)
                }
            }
            return SQLiteBlobReader(pool: pool, sha256: sha256, chunkCount: chunkCount, hold: hold)
        }
    }

    package func blobSize(sha256: String) async throws -> Int64? {
        try await pool.read { db in try BlobUploadRecords.blobSize(db, sha256: sha256) }
    }

    package func blobUsers(sha256: String) async throws -> BlobUsers {
        try await pool.read { db in try BlobUploadRecords.users(db, sha256: sha256) }
    }

    package func blobUpload(sha256: String, uploader: String) async throws -> BlobUpload? {
        try await pool.read { db in try BlobUploadRecords.fetch(db, sha256: sha256, uploader: uploader) }
    }

    /// Waits for queued writes, checkpoints the WAL into the database and releases it, so another
    /// store or daemon may open it.
    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? pool.close()
        ownership.release()
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// The WAL's length, in frames (pages), past which a writer checkpoints between batches
    /// (``checkpointIfLong(_:)``): 16 MiB of 4 KiB pages.
    static let checkpointFrames = 4096

    /// Copies the WAL into the database file if it holds ``checkpointFrames`` frames or more, on
    /// the writer's connection, between batches.
    ///
    /// Under a steady load the writer drains batch after batch and the checkpoint
    /// ``scheduleCheckpoint()`` queues behind it waits for the load to pause, while every commit
    /// appends to a WAL that never restarts: it grew past 200 MiB in 6 seconds of 16 writing
    /// clients, each commit extending the file, so that each sync also wrote its new size. A
    /// checkpoint that copies every frame lets the next commit write the WAL from its start again.
    func checkpointIfLong(_ db: Database) {
        guard walFrames.value >= Self.checkpointFrames else { return }
        _ = try? db.checkpoint(.passive)
    }

    /// Copies the WAL into the database file soon after a commit, on the database's writer
    /// queue, once the commit's requests are answered.
    ///
    /// SQLite's own auto-checkpoint (turned off, see ``StoreDatabase``) runs inside the commit
    /// that crosses its threshold, so that commit's requests waited for it: a 50 MiB upload spent
    /// ~40% of its time on copying its own bytes a second time. One checkpoint at most is
    /// scheduled at a time, a quarter second after the commit that scheduled it, so a stream of
    /// small writes shares one. Durability does not depend on it: the WAL holds every commit.
    func scheduleCheckpoint() {
        guard !checkpointScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
            guard !closed.load(ordering: .acquiring) else { return }
            pool.asyncWriteWithoutTransaction { db in
                // On the writer queue, after close()'s own last write if the storage closed
                // meanwhile: the connection may be closed, and is not touched then.
                guard !self.closed.load(ordering: .acquiring) else { return }
                self.checkpointScheduled.store(false, ordering: .releasing)
                _ = try? db.checkpoint(.passive)
            }
        }
    }
}
