import Foundation
internal import GRDB
import PrefsEngine

/// The SQL for blobs sent by their hash (`PATCH /v1/blobs/{sha256}`): the uploads under way with
/// their chunks, and who uploaded each stored blob. Called inside the writer's transaction for
/// changes, and from read connections for queries.
///
/// A whole upload whose bytes hash to its name becomes the blob's bytes where they are: the blob
/// names it (`blob.uploader`), and it stays, whole, until the blob goes (a trigger deletes it
/// then). Deleting or pruning uploads never touches one that holds a blob's bytes.
enum BlobUploadRecords {
    private static let uploadColumns = "sha256, uploader, byte_size, received, chunk_count, updated_at"

    /// `blob_upload`'s rows that hold no blob's bytes: uploads under way, or not stored.
    private static let holdsNoBlob =
        "NOT EXISTS (SELECT 1 FROM blob WHERE blob.sha256 = blob_upload.sha256 AND blob.uploader = blob_upload.uploader)"

    /// The upload of `sha256` by `uploader` under way.
    static func fetch(_ db: Database, sha256: String, uploader: String) throws -> BlobUpload? {
        try Row.fetchOne(
            db, sql: "SELECT \(uploadColumns) FROM blob_upload WHERE sha256 = ? AND uploader = ?", arguments: [sha256, uploader]
        ).map { row in
            BlobUpload(
                sha256: row["sha256"], uploader: row["uploader"], byteSize: row["byte_size"], received: row["received"],
                chunkCount: row["chunk_count"], updatedAt: row["updated_at"])
        }
    }

    /// Stores a new upload, replacing the one of the same blob by the same uploader (its chunks
    /// go with it).
    static func start(_ db: Database, _ upload: BlobUpload) throws {
        try delete(db, sha256: upload.sha256, uploader: upload.uploader)
        try db.execute(
            sql: "INSERT INTO blob_upload (\(uploadColumns)) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [upload.sha256, upload.uploader, upload.byteSize, upload.received, upload.chunkCount, upload.updatedAt])
    }

    /// Appends a chunk to an upload and counts it.
    static func append(_ db: Database, sha256: String, uploader: String, _ data: Data, time: Double) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO blob_upload_chunk (sha256, uploader, number, data)
                SELECT sha256, uploader, chunk_count, ? FROM blob_upload WHERE sha256 = ? AND uploader = ?
                """
        ).execute(arguments: [data, sha256, uploader])
        try db.cachedStatement(
            sql: """
                UPDATE blob_upload SET received = received + ?, chunk_count = chunk_count + 1, updated_at = ?
                WHERE sha256 = ? AND uploader = ?
                """
        ).execute(arguments: [data.count, time, sha256, uploader])
    }

    /// One chunk of an upload.
    static func chunk(_ db: Database, sha256: String, uploader: String, number: Int) throws -> Data? {
        try Data.fetchOne(
            db, sql: "SELECT data FROM blob_upload_chunk WHERE sha256 = ? AND uploader = ? AND number = ?",
            arguments: [sha256, uploader, number])
    }

    /// Makes an upload's chunks the blob's bytes where they are, without copying them — a blob
    /// known and not held becomes held. The upload stays, whole, as long as the blob.
    static func store(_ db: Database, sha256: String, uploader: String) throws {
        try db.execute(
            sql: """
                INSERT INTO blob (sha256, byte_size, chunk_count, held, uploader)
                SELECT sha256, byte_size, chunk_count, 1, uploader FROM blob_upload WHERE sha256 = ? AND uploader = ?
                ON CONFLICT (sha256) DO UPDATE
                SET byte_size = excluded.byte_size, chunk_count = excluded.chunk_count, held = 1, uploader = excluded.uploader
                """,
            arguments: [sha256, uploader])
    }

    /// Removes an upload (its chunks go with it), unless it holds a blob's bytes.
    static func delete(_ db: Database, sha256: String, uploader: String) throws {
        try db.execute(
            sql: "DELETE FROM blob_upload WHERE sha256 = ? AND uploader = ? AND \(holdsNoBlob)", arguments: [sha256, uploader])
    }

    /// Records (or brings up to date) who uploaded a stored blob, and when.
    static func recordUploader(_ db: Database, sha256: String, uploader: String, time: Double) throws {
        try db.execute(
            sql: """
                INSERT INTO blob_uploader (sha256, uploader, uploaded_at) VALUES (?, ?, ?)
                ON CONFLICT (sha256, uploader) DO UPDATE SET uploaded_at = max(uploaded_at, excluded.uploaded_at)
                """,
            arguments: [sha256, uploader, time])
    }

    /// Drops the uploads under way that last received bytes before `time`, and the uploaders recorded
    /// before it of blobs no attachment uses; returns those blobs, which may now be unused.
    static func prune(_ db: Database, before time: Double) throws -> [String] {
        try db.execute(sql: "DELETE FROM blob_upload WHERE updated_at < ? AND \(holdsNoBlob)", arguments: [time])
        let unused = "uploaded_at < ? AND NOT EXISTS (SELECT 1 FROM attachment WHERE attachment.sha256 = blob_uploader.sha256)"
        let blobs = try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM blob_uploader WHERE \(unused)", arguments: [time])
        try db.execute(sql: "DELETE FROM blob_uploader WHERE \(unused)", arguments: [time])
        return blobs
    }

    /// The size of a stored blob.
    static func blobSize(_ db: Database, sha256: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT byte_size FROM blob WHERE sha256 = ? AND held = 1", arguments: [sha256])
    }

    /// The accounts whose drafts use a blob, and its uploaders.
    static func users(_ db: Database, sha256: String) throws -> BlobUsers {
        let accounts = try String.fetchAll(
            db, sql: "SELECT DISTINCT draft.account FROM attachment JOIN draft ON draft.id = attachment.draft WHERE attachment.sha256 = ?",
            arguments: [sha256])
        let uploaders = try String.fetchAll(db, sql: "SELECT uploader FROM blob_uploader WHERE sha256 = ?", arguments: [sha256])
        return BlobUsers(accounts: Set(accounts), uploaders: Set(uploaders))
    }
}
