import Foundation
internal import GRDB
import PrefsKit

/// The SQL for drafts and attachments. Called inside the writer's transaction for changes, and
/// from read connections for queries.
enum DraftRecords {
    private static let draftColumns = """
        id, account, thread, position, reply_to, text, content_warning, visibility, language, sensitive, poll,
        created_at, updated_at, revision, conflict_of, deleted_elsewhere
        """
    private static let attachmentColumns = """
        id, draft, position, kind, mime_type, filename, byte_size, sha256, alt_text, width, height
        """

    /// One draft with its attachments.
    static func fetch(_ db: Database, id: UUID) throws -> Draft? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(draftColumns) FROM draft WHERE id = ?", arguments: [id.uuidString])
        else { return nil }
        return try draft(row, attachments: attachments(db, of: id))
    }

    /// Drafts matching an account and/or thread, by account, thread, position, creation.
    static func fetchAll(_ db: Database, account: String?, thread: String?) throws -> [Draft] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let account {
            conditions.append("account = ?")
            arguments += [account]
        }
        if let thread {
            conditions.append("thread = ?")
            arguments += [thread]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try fetchDrafts(
            db, sql: "SELECT \(draftColumns) FROM draft \(filter) ORDER BY account, thread, position, created_at, id",
            arguments: arguments)
    }

    private static func fetchDrafts(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Draft] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            try draft(row, attachments: attachments(db, of: UUID(uuidString: row["id"])!))
        }
    }

    static func attachments(_ db: Database, of draft: UUID) throws -> [Attachment] {
        try Row.fetchAll(
            db, sql: "SELECT \(attachmentColumns) FROM attachment WHERE draft = ? ORDER BY position",
            arguments: [draft.uuidString]
        ).map(attachment)
    }

    static func insert(_ db: Database, _ draft: Draft) throws {
        try db.execute(
            sql: "INSERT INTO draft (\(draftColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: arguments(of: draft))
    }

    static func update(_ db: Database, _ draft: Draft) throws {
        var values = arguments(of: draft)
        values += [draft.id.uuidString]
        try db.execute(
            sql: """
                UPDATE draft SET id = ?, account = ?, thread = ?, position = ?, reply_to = ?, text = ?,
                    content_warning = ?, visibility = ?, language = ?, sensitive = ?, poll = ?, created_at = ?,
                    updated_at = ?, revision = ?, conflict_of = ?, deleted_elsewhere = ?
                WHERE id = ?
                """,
            arguments: values)
    }

    /// Deletes a draft (its attachments go with it, not their bytes: ``freeBlobIfUnused(_:sha256:)``).
    static func delete(_ db: Database, _ draft: Draft) throws {
        try db.execute(sql: "DELETE FROM draft WHERE id = ?", arguments: [draft.id.uuidString])
    }

    static func insert(_ db: Database, _ attachment: Attachment) throws {
        try db.execute(
            sql: "INSERT INTO attachment (\(attachmentColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            arguments: [
                attachment.id.uuidString, attachment.draft.uuidString, attachment.position, attachment.kind.rawValue,
                attachment.mimeType, attachment.filename, attachment.byteSize, attachment.sha256, attachment.altText,
                attachment.width, attachment.height,
            ])
    }

    static func update(_ db: Database, _ attachment: Attachment) throws {
        try db.execute(
            sql: "UPDATE attachment SET position = ?, alt_text = ? WHERE id = ?",
            arguments: [attachment.position, attachment.altText, attachment.id.uuidString])
    }

    /// Deletes an attachment, not its bytes (``freeBlobIfUnused(_:sha256:)``).
    static func delete(_ db: Database, _ attachment: Attachment) throws {
        try db.execute(sql: "DELETE FROM attachment WHERE id = ?", arguments: [attachment.id.uuidString])
    }

    // MARK: - Blobs

    /// The size of each stored chunk of a blob.
    static let chunkSize = 256 * 1024

    /// Whether the bytes of the blob `sha256` are stored here (not only known of).
    static func blobExists(_ db: Database, sha256: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM blob WHERE sha256 = ? AND held = 1)", arguments: [sha256]) ?? false
    }

    /// Records a blob of `byteSize` bytes that is known, not held: its bytes are fetched when
    /// read. Nothing changes if the blob is recorded already.
    static func noteBlob(_ db: Database, sha256: String, byteSize: Int64) throws {
        try db.execute(
            sql: "INSERT INTO blob (sha256, byte_size, chunk_count, held) VALUES (?, ?, 0, 0) ON CONFLICT (sha256) DO NOTHING",
            arguments: [sha256, byteSize])
    }

    /// Stores a blob from a file, one chunk at a time, never holding the whole file; a blob
    /// known and not held becomes held.
    static func insertBlob(_ db: Database, sha256: String, byteSize: Int64, from file: URL) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let chunkCount = Int((byteSize + Int64(chunkSize) - 1) / Int64(chunkSize))
        try db.execute(
            sql: """
                INSERT INTO blob (sha256, byte_size, chunk_count, held) VALUES (?, ?, ?, 1)
                ON CONFLICT (sha256) DO UPDATE SET byte_size = excluded.byte_size, chunk_count = excluded.chunk_count, held = 1
                """,
            arguments: [sha256, byteSize, chunkCount])
        let insert = try db.cachedStatement(sql: "INSERT INTO blob_chunk (sha256, number, data) VALUES (?, ?, ?)")
        for number in 0..<chunkCount {
            let data = try handle.read(upToCount: chunkSize) ?? Data()
            try insert.execute(arguments: [sha256, number, data])
        }
    }

    /// The number of chunks of a blob; nil if its bytes are not stored here.
    static func chunkCount(_ db: Database, sha256: String) throws -> Int? {
        try Int.fetchOne(db, sql: "SELECT chunk_count FROM blob WHERE sha256 = ? AND held = 1", arguments: [sha256])
    }

    /// One chunk of a blob: from `blob_chunk`, or from the upload its bytes came by
    /// (``BlobUploadRecords/store(_:sha256:uploader:)``).
    static func chunk(_ db: Database, sha256: String, number: Int) throws -> Data? {
        try Data.fetchOne(
            db,
            sql: """
                SELECT data FROM blob_chunk WHERE sha256 = ?1 AND number = ?2
                UNION ALL
                SELECT blob_upload_chunk.data FROM blob JOIN blob_upload_chunk USING (sha256, uploader)
                WHERE blob.sha256 = ?1 AND blob_upload_chunk.number = ?2
                """,
            arguments: [sha256, number])
    }

    /// Deletes a blob (its chunks, its uploaders and the upload holding its bytes go with it) if
    /// no attachment uses it and no uploader keeps it (``BlobUploadRecords/prune(_:before:)``
    /// drops those in time).
    static func freeBlobIfUnused(_ db: Database, sha256: String) throws {
        try db.execute(
            sql: """
                DELETE FROM blob WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM attachment WHERE sha256 = ?)
                AND NOT EXISTS (SELECT 1 FROM blob_uploader WHERE sha256 = ?)
                """,
            arguments: [sha256, sha256, sha256])
    }

    /// Deletes every blob no attachment uses and no uploader keeps: those a download held when
    /// the process ended.
    static func freeUnusedBlobs(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM blob WHERE NOT EXISTS (SELECT 1 FROM attachment WHERE attachment.sha256 = blob.sha256)
                AND NOT EXISTS (SELECT 1 FROM blob_uploader WHERE blob_uploader.sha256 = blob.sha256)
                """)
    }

    // MARK: - Rows

    private static func arguments(of draft: Draft) -> StatementArguments {
        [
            draft.id.uuidString, draft.account, draft.thread, draft.position, draft.replyTo, draft.text,
            draft.contentWarning, draft.visibility.rawValue, draft.language, draft.sensitive,
            draft.poll.map { String(decoding: (try? JSONEncoder().encode($0)) ?? Data(), as: UTF8.self) },
            draft.createdAt.timeIntervalSince1970, draft.updatedAt.timeIntervalSince1970, draft.revision,
            draft.conflictOf?.uuidString, draft.deletedElsewhere,
        ]
    }

    private static func draft(_ row: Row, attachments: [Attachment]) throws -> Draft {
        Draft(
            id: UUID(uuidString: row["id"])!, account: row["account"], thread: row["thread"], position: row["position"],
            replyTo: row["reply_to"], text: row["text"], contentWarning: row["content_warning"],
            visibility: Draft.Visibility(rawValue: row["visibility"]) ?? .public, language: row["language"],
            sensitive: row["sensitive"],
            poll: try (row["poll"] as String?).map { try JSONDecoder().decode(Draft.Poll.self, from: Data($0.utf8)) },
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]), revision: row["revision"],
            attachments: attachments, conflictOf: (row["conflict_of"] as String?).flatMap(UUID.init(uuidString:)),
            deletedElsewhere: row["deleted_elsewhere"])
    }

    private static func attachment(_ row: Row) -> Attachment {
        Attachment(
            id: UUID(uuidString: row["id"])!, draft: UUID(uuidString: row["draft"])!, position: row["position"],
            kind: Attachment.Kind(rawValue: row["kind"]) ?? .file, mimeType: row["mime_type"], filename: row["filename"],
            byteSize: row["byte_size"], sha256: row["sha256"], altText: row["alt_text"], width: row["width"],
            height: row["height"])
    }
}
