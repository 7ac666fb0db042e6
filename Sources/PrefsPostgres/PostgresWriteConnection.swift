import Foundation
import Logging
import NIOCore
import PostgresNIO
import PrefsEngine
import PrefsKit

/// The writer's connection to PostgreSQL, lent to the engine for each group commit. Every call
/// waits for the database on the writer's own thread (never an event loop).
///
/// A transaction begins — in the transaction the previous commit opened (`COMMIT AND CHAIN`) — by
/// reading what other hosts committed since this host's newest revision, which the engine takes
/// in before its own. An optimistic one takes the one-row revision counter only as it commits
/// (`prefsd_commit_after`), so hosts' batches run side by side and only their commits queue on
/// the counter; one that must not be overtaken (it is run again after a conflict) locks the
/// counter as it begins (`prefsd_begin`). Preference rows and log entries wait in
/// ``PendingWrites`` and go out in one statement before `COMMIT`; draft rows are written at once,
/// since later requests read them back. A request's savepoint is sent only if the request writes
/// a row at once: for the rest, forgetting its pending writes undoes it.
///
/// The connection is made on first use, and made again after the database went away.
final class PostgresWriteConnection: WriteConnection {
    private let location: PostgresLocation
    private let configuration: PostgresConnection.Configuration
    private let hostID: String
    private let logger: Logger
    private var connection: PostgresConnection?
    private var pending = PendingWrites()
    /// The revision counter when the transaction began.
    private var startRevision: Revision = 0
    /// Whether the connection is in a transaction no batch has used yet (the one `COMMIT AND
    /// CHAIN` opened), so a batch begins without `BEGIN`.
    private var transactionOpen = false
    /// Whether the transaction began without the revision counter (it takes it as it commits).
    private var optimistic = false
    /// The drafts the transaction read, when it is optimistic.
    private var draftsRead = DraftsRead()
    /// Whether a statement failed outside a savepoint: the transaction can only roll back.
    private var aborted = false
    /// The request savepoint in progress: whether `SAVEPOINT` has been sent for it.
    private var savepointSent: Bool?

    init(location: PostgresLocation, configuration: PostgresConnection.Configuration, hostID: String, logger: Logger) {
        self.location = location
        self.configuration = configuration
        self.hostID = hostID
        self.logger = logger
    }

    // MARK: Snapshot

    /// Every key's stored state and the log's bounds, in one read-only snapshot.
    func loadSnapshot() throws -> StorageSnapshot {
        if transactionOpen {
            _ = try? run("ROLLBACK")
            transactionOpen = false
        }
        try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        transactionOpen = true
        defer {
            // Not rollback(): the transaction it would chain would be read-only.
            _ = try? run("ROLLBACK")
            transactionOpen = false
        }
        let state = try run("SELECT newest_revision, oldest_revision FROM change_log_state WHERE id = 1")
        guard let bounds = state.first?.makeRandomAccess() else {
            throw PrefsError(.internal, "The database has no change_log_state row; it was not made by prefsd.")
        }
        let count = try run("SELECT count(*) AS count FROM preference").first?.makeRandomAccess()["count"].decode(Int64.self)
        var builder = StorageSnapshot.Builder(keyCount: Int(count ?? 0))
        for row in try run("SELECT key, scope, value, revision FROM preference ORDER BY key COLLATE \"C\"") {
            let row = row.makeRandomAccess()
            builder.addValue(
                key: try row["key"].decode(String.self), scope: try ScopePath(row["scope"].decode(String.self)),
                value: try JSONValue(parsing: row["value"].decode(String.self)), revision: try row["revision"].decode(Int64.self))
        }
        for row in try run("SELECT key, scope, revision FROM preference_lock") {
            let row = row.makeRandomAccess()
            builder.addLock(
                key: try row["key"].decode(String.self), scope: try ScopePath(row["scope"].decode(String.self)),
                revision: try row["revision"].decode(Int64.self))
        }
        for row in try run("SELECT key, definition FROM preference_schema") {
            let row = row.makeRandomAccess()
            builder.addSchema(
                key: try row["key"].decode(String.self),
                schema: try PreferenceSchema(json: Data(row["definition"].decode(String.self).utf8)))
        }
        return builder.snapshot(
            newestRevision: try bounds["newest_revision"].decode(Int64.self),
            oldestRevision: try bounds["oldest_revision"].decode(Int64.self))
    }

    // MARK: Transactions

    /// Begins the batch's transaction and reads the changes other hosts committed after
    /// `revision`, in one round trip (`prefsd_begin`): locking the revision counter first, or,
    /// when `optimistic`, not (the counter is taken as the batch commits, `prefsd_commit_after`).
    func begin(after revision: Revision, optimistic: Bool) throws -> ChangeLogPage {
        pending = PendingWrites()
        aborted = false
        savepointSent = nil
        self.optimistic = optimistic
        draftsRead = DraftsRead()
        let query: PostgresQuery = "SELECT * FROM prefsd_begin(\(revision), \(!optimistic))"
        let rows: [PostgresRow]
        do {
            rows = try openAndRead(query)
        } catch where connection != nil && isConnectionFailure(error) {
            // A connection that went stale while idle (the server restarted): once more, anew.
            close()
            aborted = false
            rows = try openAndRead(query)
        }
        guard let row = rows.first?.makeRandomAccess() else {
            throw PrefsError(.internal, "The database has no change_log_state row; it was not made by prefsd.")
        }
        startRevision = try row["log_newest_revision"].decode(Int64.self)
        return try PostgresRows.changePage(rows)
    }

    /// Opens a transaction unless one is open already, then runs `query` in it.
    private func openAndRead(_ query: PostgresQuery) throws -> [PostgresRow] {
        if transactionOpen, connection?.isClosed ?? true {
            // The transaction opened for this batch went with its connection.
            transactionOpen = false
        }
        if !transactionOpen {
            try run("BEGIN")
            transactionOpen = true
        }
        return try run(query)
    }

    /// Commits, and opens the next batch's transaction in the same round trip (`COMMIT AND
    /// CHAIN`): between batches the connection is idle in a transaction that has neither locked
    /// nor read anything yet, so it holds nothing back.
    ///
    /// An optimistic transaction takes the revision counter here: if other hosts committed since
    /// it began, its changes go after theirs (returned, with the shift of its revisions), unless
    /// theirs touch what it read — then it throws ``StorageConflict``, and has written nothing.
    func commit(newestRevision: Revision, following base: Revision, keysRead: KeysRead) throws -> CommitRebase? {
        defer { pending = PendingWrites() }
        // Optimistic, the batch worked on the engine's state at `base`, which may be past what
        // this transaction read at its start (the engine takes in other hosts' commits as they come).
        let start = optimistic ? base : startRevision
        guard !pending.isEmpty || newestRevision > start else {
            try run("COMMIT AND CHAIN")
            return nil
        }
        guard optimistic else {
            try run(pending.statement(newestRevision: newestRevision, startRevision: start, payload: "\(hostID) \(newestRevision)"))
            try run("COMMIT AND CHAIN")
            return nil
        }
        let rows = try conflictsAsStorageConflict {
            try run(
                pending.statementAfter(
                    startRevision: start, keysRead: keysRead, draftsRead: draftsRead, newestRevision: newestRevision,
                    payloadPrefix: "\(hostID) "))
        }
        try run("COMMIT AND CHAIN")
        let newest = try rows.first?.makeRandomAccess()["log_newest_revision"].decode(Int64.self) ?? start
        guard newest > start else { return nil }
        return CommitRebase(shift: newest - start, committedBefore: try PostgresRows.changePage(rows))
    }

    /// Rolls back, and opens the next batch's transaction (`ROLLBACK AND CHAIN`).
    func rollback() {
        pending = PendingWrites()
        transactionOpen = false
        guard let connection, !connection.isClosed else { return }
        transactionOpen = (try? connection.query("ROLLBACK AND CHAIN", logger: logger).wait()) != nil
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let before = pending
        savepointSent = false
        defer { savepointSent = nil }
        do {
            let value = try body()
            if savepointSent == true { try run("RELEASE SAVEPOINT request") }
            return value
        } catch {
            pending = before
            if savepointSent == true {
                _ = try? run("ROLLBACK TO SAVEPOINT request")
                _ = try? run("RELEASE SAVEPOINT request")
            }
            throw error
        }
    }

    func checkTransactionIsOpen() throws {
        guard !aborted, let connection, !connection.isClosed else {
            throw PostgresErrors.unreachable(location, detail: "the transaction was lost")
        }
    }

    func translate(_ error: any Error) -> any Error {
        PostgresErrors.translate(error, location: location)
    }

    // MARK: Preferences and the change log, sent before COMMIT

    func upsertValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws {
        pending.setValue(key: key, scope: scope, value: value, revision: revision)
    }

    func deleteValue(key: String, scope: ScopePath) throws {
        pending.deleteValue(key: key, scope: scope)
    }

    func insertLock(key: String, scope: ScopePath, revision: Revision) throws {
        pending.setLock(key: key, scope: scope, revision: revision)
    }

    func deleteLock(key: String, scope: ScopePath) throws {
        pending.deleteLock(key: key, scope: scope)
    }

    func upsertSchema(key: String, schema: PreferenceSchema, revision: Revision) throws {
        pending.setSchema(key: key, schema: schema, revision: revision)
    }

    func appendChange(_ change: LoggedChange, at time: Double) throws {
        pending.append(change, at: time)
    }

    func compactChangeLog(keepingFrom oldestRevision: Revision, newestRevision: Revision) throws {
        pending.keepChangesFrom = oldestRevision
    }

    // MARK: Drafts and blobs, written at once

    func draft(_ id: UUID) throws -> Draft? {
        draftsRead.read(id)
        return try drafts(PostgresRows.draftQuery(id)).first
    }

    func drafts(account: String?, thread: String?) throws -> [Draft] {
        draftsRead.listed(account: account, thread: thread)
        return try drafts(PostgresRows.draftsQuery(account: account, thread: thread))
    }

    private func drafts(_ query: PostgresQuery) throws -> [Draft] {
        let rows = try run(query)
        let ids = try rows.map { try UUID(uuidString: $0.makeRandomAccess()["id"].decode(String.self)) ?? UUID() }
        let attachments = ids.isEmpty ? [] : try run(PostgresRows.attachmentsQuery(of: ids))
        return try PostgresRows.drafts(rows, attachments: attachments)
    }

    func insertDraft(_ draft: Draft) throws {
        try write(DraftStatements.insert(draft))
    }

    func updateDraft(_ draft: Draft) throws {
        try write(DraftStatements.update(draft))
    }

    func deleteDraft(_ draft: Draft) throws {
        try write("DELETE FROM draft WHERE id = \(draft.id.uuidString)")
        for sha256 in Set(draft.attachments.map(\.sha256)) { try freeBlobIfUnused(sha256) }
    }

    func insertAttachment(_ attachment: Attachment) throws {
        try write(DraftStatements.insert(attachment))
    }

    func updateAttachment(_ attachment: Attachment) throws {
        try write(
            "UPDATE attachment SET position = \(attachment.position), alt_text = \(attachment.altText) WHERE id = \(attachment.id.uuidString)")
    }

    func deleteAttachment(_ attachment: Attachment) throws {
        try write("DELETE FROM attachment WHERE id = \(attachment.id.uuidString)")
        try freeBlobIfUnused(attachment.sha256)
    }

    func blobExists(sha256: String) throws -> Bool {
        try !run("SELECT 1 FROM blob WHERE sha256 = \(sha256)").isEmpty
    }

    /// Stores the file's bytes in chunks of ``DraftStatements/chunkSize``, one statement a chunk:
    /// never the whole file in memory.
    func insertBlob(sha256: String, byteSize: Int64, from file: URL) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let chunkSize = DraftStatements.chunkSize
        let chunkCount = Int((byteSize + Int64(chunkSize) - 1) / Int64(chunkSize))
        try write("INSERT INTO blob (sha256, byte_size, chunk_count) VALUES (\(sha256), \(byteSize), \(chunkCount))")
        for number in 0..<chunkCount {
            let data = ByteBuffer(bytes: try handle.read(upToCount: chunkSize) ?? Data())
            try write("INSERT INTO blob_chunk (sha256, number, data) VALUES (\(sha256), \(number), \(data))")
        }
    }

    private func freeBlobIfUnused(_ sha256: String) throws {
        try write(
            """
            DELETE FROM blob WHERE sha256 = \(sha256)
            AND NOT EXISTS (SELECT 1 FROM attachment WHERE sha256 = \(sha256))
            """)
    }

    // MARK: Statements

    /// Runs a statement that writes at once, inside the request's savepoint. A row another
    /// host's optimistic transaction wrote meanwhile (the same blob stored twice, a blob freed
    /// under a new attachment) or a deadlock with one is a ``StorageConflict``: the batch runs
    /// again, holding the others off.
    private func write(_ query: PostgresQuery) throws {
        if savepointSent == false {
            try run("SAVEPOINT request")
            savepointSent = true
        }
        _ = try conflictsAsStorageConflict { try run(query) }
    }

    /// Runs `body`, turning what another host's concurrent transaction can cause — a unique or
    /// foreign-key violation, a serialization failure, a deadlock — into a ``StorageConflict``.
    private func conflictsAsStorageConflict<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PSQLError where ["23505", "23503", "40001", "40P01"].contains(error.serverInfo?[.sqlState]) {
            throw StorageConflict(error.serverInfo?[.message] ?? "another host wrote the same rows")
        }
    }

    /// Runs `query` and waits for its rows.
    @discardableResult
    private func run(_ query: PostgresQuery) throws -> [PostgresRow] {
        let connection = try connected()
        do {
            return try connection.query(query, logger: logger).wait().rows
        } catch {
            // Inside a request's savepoint, rolling back to it keeps the transaction.
            if savepointSent != true { aborted = true }
            throw error
        }
    }

    /// The connection, made anew if there is none or it has closed — but never inside a
    /// transaction: the rest of it would run outside one, on the new connection.
    private func connected() throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        guard !transactionOpen else {
            transactionOpen = false
            aborted = true
            throw PostgresErrors.unreachable(location, detail: "the connection was lost during the transaction")
        }
        let made = try PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 0, logger: logger
        ).wait()
        connection = made
        return made
    }

    private func isConnectionFailure(_ error: any Error) -> Bool {
        (PostgresErrors.translate(error, location: location) as? PrefsError)?.code == .unavailable
    }

    /// Closes the connection (the next statement makes a new one).
    func close() {
        transactionOpen = false
        guard let connection else { return }
        self.connection = nil
        _ = try? connection.close().wait()
    }
}
