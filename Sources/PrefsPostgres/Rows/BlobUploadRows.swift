import Foundation
import NIOCore
import PostgresNIO
import PrefsEngine

/// The SQL for blobs sent by their hash (`Migrations/postgres/0007_blob_uploads.sql`): the
/// uploads under way with their chunks, and who uploaded each stored blob — written at once in
/// the writer's batch, and read back.
enum BlobUploadRows {
    /// The upload of `sha256` by `uploader`, its row locked until the transaction ends: another
    /// host adding to the same upload waits, then sees what this one added.
    static func lockUpload(sha256: String, uploader: String) -> PostgresQuery {
        """
        SELECT sha256, uploader, byte_size, received, chunk_count, updated_at FROM blob_upload
        WHERE sha256 = \(sha256) AND uploader = \(uploader) FOR UPDATE
        """
    }

    /// The upload of `sha256` by `uploader`.
    static func upload(sha256: String, uploader: String) -> PostgresQuery {
        """
        SELECT sha256, uploader, byte_size, received, chunk_count, updated_at FROM blob_upload
        WHERE sha256 = \(sha256) AND uploader = \(uploader)
        """
    }

    /// A row of ``upload(sha256:uploader:)`` or ``lockUpload(sha256:uploader:)``.
    static func upload(_ row: PostgresRow) throws -> BlobUpload {
        let row = row.makeRandomAccess()
        return BlobUpload(
            sha256: try row["sha256"].decode(String.self), uploader: try row["uploader"].decode(String.self),
            byteSize: try row["byte_size"].decode(Int64.self), received: try row["received"].decode(Int64.self),
            chunkCount: try row["chunk_count"].decode(Int.self), updatedAt: try row["updated_at"].decode(Double.self))
    }

    /// Makes an upload's chunks the blob's bytes where they are, without copying them — a blob
    /// known and not held becomes held. The upload stays, whole, as long as the blob (a trigger
    /// deletes it with the blob).
    static func storeBlob(sha256: String, uploader: String) -> PostgresQuery {
        """
        INSERT INTO blob (sha256, byte_size, chunk_count, held, uploader)
        SELECT sha256, byte_size, chunk_count, TRUE, uploader FROM blob_upload WHERE sha256 = \(sha256) AND uploader = \(uploader)
        ON CONFLICT (sha256) DO UPDATE
        SET byte_size = excluded.byte_size, chunk_count = excluded.chunk_count, held = TRUE, uploader = excluded.uploader
        """
    }

    /// `blob_upload`'s rows that hold no blob's bytes: uploads under way, or not stored.
    private static let holdsNoBlob =
        "NOT EXISTS (SELECT 1 FROM blob b WHERE b.sha256 = blob_upload.sha256 AND b.uploader = blob_upload.uploader)"

    /// Removes an upload (its chunks go with it), unless it holds a blob's bytes.
    static func delete(sha256: String, uploader: String) -> PostgresQuery {
        "DELETE FROM blob_upload WHERE sha256 = \(sha256) AND uploader = \(uploader) AND \(unescaped: holdsNoBlob)"
    }

    static func insert(_ upload: BlobUpload) -> PostgresQuery {
        """
        INSERT INTO blob_upload (sha256, uploader, byte_size, received, chunk_count, updated_at)
        VALUES (\(upload.sha256), \(upload.uploader), \(upload.byteSize), \(upload.received), \(upload.chunkCount),
            \(upload.updatedAt))
        """
    }

    /// Appends a chunk as the upload's next and counts it, in one statement.
    static func append(sha256: String, uploader: String, _ data: Data, time: Double) -> PostgresQuery {
        """
        WITH counted AS (
            UPDATE blob_upload SET received = received + \(Int64(data.count)), chunk_count = chunk_count + 1, updated_at = \(time)
            WHERE sha256 = \(sha256) AND uploader = \(uploader)
            RETURNING chunk_count - 1 AS number)
        INSERT INTO blob_upload_chunk (sha256, uploader, number, data)
        SELECT \(sha256), \(uploader), number, \(ByteBuffer(bytes: data)) FROM counted
        """
    }

    static func chunk(sha256: String, uploader: String, number: Int) -> PostgresQuery {
        "SELECT data FROM blob_upload_chunk WHERE sha256 = \(sha256) AND uploader = \(uploader) AND number = \(number)"
    }

    static func recordUploader(sha256: String, uploader: String, time: Double) -> PostgresQuery {
        """
        INSERT INTO blob_uploader (sha256, uploader, uploaded_at) VALUES (\(sha256), \(uploader), \(time))
        ON CONFLICT (sha256, uploader) DO UPDATE SET uploaded_at = greatest(blob_uploader.uploaded_at, excluded.uploaded_at)
        """
    }

    /// Drops the uploads under way that last received bytes before `time`.
    static func pruneUploads(before time: Double) -> PostgresQuery {
        "DELETE FROM blob_upload WHERE updated_at < \(time) AND \(unescaped: holdsNoBlob)"
    }

    /// Drops the uploaders recorded before `time` of blobs no attachment uses; its rows name
    /// those blobs, which may now be unused.
    static func pruneUploaders(before time: Double) -> PostgresQuery {
        """
        DELETE FROM blob_uploader u
        WHERE u.uploaded_at < \(time) AND NOT EXISTS (SELECT 1 FROM attachment a WHERE a.sha256 = u.sha256)
        RETURNING u.sha256
        """
    }

    static func blobSize(sha256: String) -> PostgresQuery {
        "SELECT byte_size FROM blob WHERE sha256 = \(sha256) AND held"
    }

    /// The accounts whose drafts use a blob, each once.
    static func accounts(using sha256: String) -> PostgresQuery {
        "SELECT DISTINCT d.account FROM attachment a JOIN draft d ON d.id = a.draft WHERE a.sha256 = \(sha256)"
    }

    static func uploaders(of sha256: String) -> PostgresQuery {
        "SELECT uploader FROM blob_uploader WHERE sha256 = \(sha256)"
    }
}
