import Foundation
import Logging
import NIOCore
import PostgresNIO
import PrefsEngine
import PrefsKit

/// The writer's connection to PostgreSQL, lent to the engine for each group commit. Every call
/// waits for the database on the writer's own thread (never an event loop).
///
/// An optimistic batch — every batch's first attempt — sends nothing until it commits: it works
/// on the state the engine has taken in; its preference rows and log entries wait in
/// ``PendingWrites``; and it commits in one call (`prefsd_commit_batch`), one round trip, which
/// checks that no host changed what the batch read since the revision it worked on, takes the
/// one-row revision counter (and checks again what was committed in the moment between),
/// writes, and commits before it answers — so an answer means the batch is durable. The counter
/// is held for the batch's writes and its sync only, never across a round trip to this host, so
/// hosts' batches run side by side and queue on the counter only as they commit; the call returns
/// what other hosts committed before it, taken in ahead of the batch's own changes. Only a batch
/// that writes a row at once — draft rows, which later requests read back, and blobs — opens a
/// transaction (`BEGIN` before that row), and commits it after the call.
///
/// A batch that must not be overtaken (it runs again after a conflict) opens a transaction and
/// locks the counter as it begins. A request's savepoint is sent only if the request writes a row
/// at once: for the rest, forgetting its pending writes undoes it.
///
/// The connection is made on first use, and made again after the database went away
/// (``WriterLink``). A batch whose commit may have reached the server before its connection was
/// lost finds out what became of it (``LostCommitInquiry``); one whose connection failed before
/// its commit was handed over changed nothing, and fails `unavailable` at once.
final class PostgresWriteConnection: WriteConnection, SharedTransactions {
    private let link: WriterLink
    private let hostID: String
    /// Where each commit is recorded: it took in what other hosts committed before it.
    private let activity: WriterActivity
    private let logger: Logger
    private var pending = PendingWrites()
    /// The revision counter when a batch that locked it began.
    private var startRevision: Revision = 0
    /// Where the batch's transaction and its request's savepoint stand.
    private var transaction = WriterTransaction()
    /// The drafts the batch read, when it is optimistic.
    private var draftsRead = DraftsRead()
    /// The batch's id, written with it as it commits (`write_batch`): after a lost connection,
    /// it tells whether the batch committed.
    private var batchID = UUID().uuidString
    /// Whether the batch's committing statement was handed to an open connection: if that
    /// connection is lost, the batch may have committed.
    private var commitHandedOver = false

    /// The writer's connection to `location`; `clock` is the engine's, which measures the
    /// lost-commit recovery's waits.
    init(
        location: PostgresLocation, configuration: PostgresConnection.Configuration, clock: any Clock<Duration>, hostID: String,
        activity: WriterActivity, logger: Logger
    ) {
        link = WriterLink(location: location, configuration: configuration, clock: clock, logger: logger)
        self.hostID = hostID
        self.activity = activity
        self.logger = logger
    }

    // MARK: Snapshot

    /// Every key's stored state, the log's bounds and the replica's state, in one read-only
    /// snapshot.
    func loadSnapshot() throws -> StorageSnapshot {
        rollback()
        try run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        transaction.sent(.begin)
        defer { rollback() }
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
        for row in try run(TokenRows.all) { builder.addToken(try TokenRows.token(row)) }
        builder.replica = try SyncRows.replica(record: run(SyncRows.replicaRecord), outbox: run(SyncRows.outbox), bases: run(SyncRows.bases))
        try DraftSyncRows.load(outbox: run(DraftSyncRows.outbox), bases: run(DraftSyncRows.bases), into: &builder.replica)
        return builder.snapshot(
            newestRevision: try bounds["newest_revision"].decode(Int64.self),
            oldestRevision: try bounds["oldest_revision"].decode(Int64.self))
    }

    // MARK: Transactions

    /// Any number of hosts write to the database.
    var transactions: WriteTransactions { .shared(self) }

    /// Begins a batch. An `optimistic` batch sends nothing: it works on the state the engine has
    /// taken in, and its commit reads what other hosts committed after it (checking that none of
    /// it touches what the batch read). Any other opens a transaction, locks the revision counter,
    /// and reads the changes other hosts committed after `revision` (`prefsd_begin`), so that it
    /// works on the newest state — also for the requests that fail on it.
    func begin(after revision: Revision, optimistic: Bool) throws -> ChangeLogPage {
        pending = PendingWrites()
        transaction.batchBegins(optimistic: optimistic)
        batchID = UUID().uuidString
        draftsRead = DraftsRead()
        guard !optimistic else { return ChangeLogPage(changes: [], oldestRevision: 0) }
        let query: PostgresQuery = "SELECT * FROM prefsd_begin(\(revision), true)"
        let rows = try onNewConnectionIfLost {
            try send(transaction.beforeWrite())
            return try run(query)
        }
        guard let row = rows.first?.makeRandomAccess() else {
            throw PrefsError(.internal, "The database has no change_log_state row; it was not made by prefsd.")
        }
        startRevision = try row["log_newest_revision"].decode(Int64.self)
        return try PostgresRows.changePage(rows)
    }

    /// Runs `statement`, which only reads or opens a transaction; if no transaction is open and
    /// the connection turns out to be lost — one that went stale while idle (the server
    /// restarted, or ended the session) — runs it once more, on a new connection. A statement
    /// that commits is never run again so: ``committing(start:newestRevision:_:)`` finds out
    /// what became of it.
    private func onNewConnectionIfLost<T>(_ statement: () throws -> T) throws -> T {
        do {
            return try statement()
        } catch where !transaction.isOpen && link.hasConnection && link.isConnectionFailure(error) {
            close()
            transaction.reconnected()
            return try statement()
        }
    }

    /// Commits the batch.
    ///
    /// An optimistic batch takes the revision counter here, in a call that commits before it
    /// answers (unless the batch opened a transaction, committed next): if other hosts committed
    /// after `base`, the revision whose state the batch worked on, its changes go after theirs
    /// (returned, with the shift of its revisions), unless theirs touch what it read — then it
    /// throws ``StorageConflict``, and has written nothing. One that wrote nothing but read
    /// something checks, without the counter, that no one changed it since.
    func commit(newestRevision: Revision, following base: Revision, keysRead: KeysRead) throws -> CommitRebase? {
        defer { pending = PendingWrites() }
        let optimistic = transaction.optimistic
        let start = optimistic ? base : startRevision
        guard !pending.isEmpty || newestRevision > start else {
            guard optimistic else {
                try commitTransaction()
                activity.committed()
                return nil
            }
            return try checkReads(after: start, keysRead: keysRead)
        }
        let time = Date().timeIntervalSince1970
        let (moved, committedBefore) = try committing(start: start, newestRevision: newestRevision) {
            guard optimistic else {
                try run(
                    pending.statement(
                        newestRevision: newestRevision, startRevision: start, payload: "\(hostID) \(newestRevision)", batch: batchID,
                        time: time))
                try commitTransaction()
                return (0, ChangeLogPage(changes: [], oldestRevision: 0))
            }
            let statement = try pending.statementAfter(
                startRevision: start, keysRead: keysRead, draftsRead: draftsRead, newestRevision: newestRevision,
                payloadPrefix: "\(hostID) ", batch: batchID, time: time, inTransaction: transaction.isOpen)
            guard transaction.isOpen else {
                let (newest, page) = try PostgresRows.committedElsewhere(run(statement, commits: true))
                return (newest - start, page)
            }
            let rows = try run(statement)
            try commitTransaction()
            let newest = try rows.first?.makeRandomAccess()["log_newest_revision"].decode(Int64.self) ?? start
            return (newest - start, try PostgresRows.changePage(rows))
        }
        activity.committed()
        guard moved > 0 else { return nil }
        return CommitRebase(shift: moved, committedBefore: committedBefore)
    }

    /// Runs `statements`, which commit the batch, and returns how far its revisions moved and
    /// what other hosts committed before it. Another host's change to what the batch read is a
    /// ``StorageConflict``.
    ///
    /// If the connection is lost once the committing statement was handed over, the batch may or
    /// may not have committed: this finds out on a new connection (``LostCommitInquiry``) rather
    /// than run it again. A batch that committed is answered as committed; one that did not
    /// throws ``StorageConflict``, and runs again. If the connection failed — or none could be
    /// made — before the committing statement was handed over, the batch changed nothing: the
    /// error is thrown at once (`unavailable`).
    private func committing(start: Revision, newestRevision: Revision, _ statements: () throws -> (Revision, ChangeLogPage))
        throws -> (moved: Revision, committedBefore: ChangeLogPage)
    {
        commitHandedOver = false
        do {
            return try conflictsAsStorageConflict(statements)
        } catch where commitHandedOver && link.isConnectionFailure(error) {
            logger.warning("The connection to PostgreSQL was lost as a batch committed (\(translate(error))); finding out whether it did.")
            close()
            transaction.reconnected()
            return try LostCommitInquiry(link: link, logger: logger, batchID: batchID).outcome(start: start, newestRevision: newestRevision)
        }
    }

    /// Ends an optimistic batch that wrote nothing: if it read something, checks that no other
    /// host changed it after `start` — else the requests' outcomes, judged on what it read, may
    /// not stand — and returns what they committed meanwhile, to take in.
    private func checkReads(after start: Revision, keysRead: KeysRead) throws -> CommitRebase? {
        guard keysRead != .some([]) || !draftsRead.isEmpty else {
            try commitTransaction()
            return nil
        }
        let rows = try conflictsAsStorageConflict {
            try onNewConnectionIfLost {
                try run(PendingWrites.readsAfter(startRevision: start, keysRead: keysRead, draftsRead: draftsRead))
            }
        }
        try commitTransaction()
        activity.committed()
        let committedBefore = try PostgresRows.changePage(rows)
        return committedBefore.changes.isEmpty ? nil : CommitRebase(shift: 0, committedBefore: committedBefore)
    }

    /// Sends `COMMIT` if the batch opened a transaction.
    private func commitTransaction() throws {
        guard transaction.isOpen else { return }
        try send([.commit])
    }

    /// Rolls the batch's transaction back, if it opened one, and forgets its pending writes.
    func rollback() {
        pending = PendingWrites()
        defer { transaction.sent(.rollback) }
        guard transaction.isOpen, let connection = link.open else { return }
        _ = try? connection.query(PostgresQuery(unsafeSQL: WriterTransaction.Statement.rollback.rawValue), logger: logger)
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let before = pending
        transaction.requestBegins()
        defer { transaction.requestEnded() }
        do {
            let value = try body()
            try send(transaction.requestEnds(succeeded: true))
            return value
        } catch {
            pending = before
            for statement in transaction.requestEnds(succeeded: false) { _ = try? send([statement]) }
            throw error
        }
    }

    /// PostgreSQL keeps its own WAL: nothing to do between batches.
    func betweenBatches() {}

    func checkTransactionIsOpen() throws {
        guard transaction.isUsable(connectionClosed: link.open == nil) else {
            throw PostgresErrors.unreachable(link.location, detail: "the transaction was lost")
        }
    }

    func translate(_ error: any Error) -> any Error {
        PostgresErrors.translate(error, location: link.location)
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

    func appendChange(_ change: LoggedChange) throws {
        pending.append(change)
    }

    func compactChangeLog(keepingFrom oldestRevision: Revision, newestRevision: Revision) throws {
        pending.keepChangesFrom = oldestRevision
    }

    func firstRevision(committedSince time: Double) throws -> Revision? {
        let rows = try onNewConnectionIfLost { try run("SELECT revision AS first FROM change WHERE created_at >= \(time) ORDER BY revision LIMIT 1") }
        return try rows.first?.makeRandomAccess()["first"].decode(Int64?.self)
    }

    // MARK: Idempotent requests

    /// Looks the keys up (on the batch's transaction, if it opened one); the keys not found are
    /// checked again as the batch commits, under the revision counter (`prefsd_record`).
    func storedOutcomes(forKeys keys: [String]) throws -> [String: StoredOutcome] {
        let rows = try onNewConnectionIfLost {
            try run(
                """
                SELECT key, fingerprint, refused, outcome, base_revision, shift, created_at FROM idempotent_request
                WHERE key = ANY(\(keys))
                """)
        }
        var outcomes: [String: StoredOutcome] = [:]
        for row in rows {
            let row = row.makeRandomAccess()
            let key = try row["key"].decode(String.self)
            outcomes[key] = StoredOutcome(
                key: key, fingerprint: try row["fingerprint"].decode(String.self), refused: try row["refused"].decode(Bool.self),
                body: try row["outcome"].decode(String.self), baseRevision: try row["base_revision"].decode(Int64.self),
                shift: try row["shift"].decode(Int64.self), createdAt: try row["created_at"].decode(Double.self))
        }
        pending.keysChecked.formUnion(keys.filter { outcomes[$0] == nil })
        return outcomes
    }

    func storeOutcome(_ outcome: StoredOutcome) throws {
        pending.store(outcome)
    }

    func pruneOutcomes(storedBefore time: Double) throws {
        pending.pruneBefore = time
    }

    // MARK: Sync, an upstream's side

    /// Makes sure the device has a row and locks it, in the batch's transaction (opened here, if
    /// the batch has none yet, taking the revision counter first as any row written at once
    /// does): another host taking in the same device's exchange waits until this batch ends, and
    /// then reads the sequence it stored.
    func appliedSequence(ofDevice device: String) throws -> Int64 {
        try write(SyncRows.ensureDevice(device))
        return try write(SyncRows.lockDevice(device)).first?.makeRandomAccess()["applied_sequence"].decode(Int64.self) ?? 0
    }

    func storeAppliedSequence(_ sequence: Int64, ofDevice device: String) throws {
        try write(SyncRows.storeAppliedSequence(sequence, ofDevice: device))
    }

    /// The batch's own newest change of the entry, if it made one (its log entries wait to be
    /// sent); else the log's, as the batch's transaction — or, without one, the database now —
    /// sees it; else the newest one compaction dropped (a compaction the batch asked for runs as
    /// it commits: until then the log still holds its rows).
    func lastChange(of key: String, at scope: ScopePath, after: Revision) throws -> LoggedChange? {
        if let own = pending.lastChange(of: key, at: scope, after: after) { return try own.loggedChange() }
        let rows = try onNewConnectionIfLost { try run(SyncRows.lastChange(of: key, at: scope, after: after)) }
        if let logged = rows.first { return try ChangeRow(logged.makeRandomAccess(), whole: true).loggedChange() }
        let compacted = try onNewConnectionIfLost { try run(SyncRows.compactedChange(of: key, at: scope, after: after)) }
        return try compacted.first.map { try SyncRows.compactedChange($0, of: key, at: scope) }
    }

    /// Waits with the batch's rows: written as it commits, under the conflict's revision moved as
    /// the batch's are (`prefsd_write_conflicts`).
    func insertConflict(_ conflict: SyncConflict) throws {
        try pending.insert(conflict)
    }

    func draftVersion(of id: UUID, at revision: Int64?) throws -> DraftVersion? {
        try write(DraftSyncRows.draftVersion(of: id, at: revision)).first.map(DraftSyncRows.draftVersion)
    }

    func storeDraftVersion(_ version: DraftVersion, time: Double) throws {
        for query in try DraftSyncRows.storeDraftVersion(version, time: time) { try write(query) }
    }

    // MARK: Sync, a replica's side, written at once

    func storeReplicaRecord(_ record: ReplicaRecord) throws {
        try write(SyncRows.storeReplicaRecord(record))
    }

    func appendOutbox(_ mutation: SyncRequest.Mutation) throws {
        try write(SyncRows.appendOutbox(mutation))
    }

    func appendDraftOutbox(_ mutation: DraftMutation) throws {
        try write(DraftSyncRows.appendDraftOutbox(mutation))
    }

    func deleteOutbox(sequences: [Int64]) throws {
        guard !sequences.isEmpty else { return }
        try write(SyncRows.deleteOutbox(sequences: sequences))
        try write(DraftSyncRows.deleteDraftOutbox(sequences: sequences))
    }

    func storeDraftBase(_ base: DraftBase?, for id: UUID) throws {
        try write(DraftSyncRows.storeDraftBase(base, for: id))
    }

    func storeSyncBase(_ base: SyncBase?, for entry: SyncEntry) throws {
        try write(SyncRows.storeSyncBase(base, for: entry))
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
        try onNewConnectionIfLost {
            let rows = try run(query)
            let ids = try PostgresRows.draftIDs(rows)
            let attachments = ids.isEmpty ? [] : try run(PostgresRows.attachmentsQuery(of: ids))
            return try PostgresRows.drafts(rows, attachments: attachments)
        }
    }

    func insertToken(_ token: StoredToken) throws {
        try write(TokenRows.insert(token))
    }

    func deleteToken(named name: String) throws {
        try write(TokenRows.delete(named: name))
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
        try onNewConnectionIfLost { try !run("SELECT 1 FROM blob WHERE sha256 = \(sha256) AND held").isEmpty }
    }

    func noteBlob(sha256: String, byteSize: Int64) throws {
        try write(
            "INSERT INTO blob (sha256, byte_size, chunk_count, held) VALUES (\(sha256), \(byteSize), 0, FALSE) ON CONFLICT (sha256) DO NOTHING")
    }

    /// Stores the file's bytes in chunks of ``DraftStatements/chunkSize``, one statement a chunk:
    /// never the whole file in memory. A blob known and not held becomes held.
    func insertBlob(sha256: String, byteSize: Int64, from file: URL) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let chunkSize = DraftStatements.chunkSize
        let chunkCount = Int((byteSize + Int64(chunkSize) - 1) / Int64(chunkSize))
        try write(
            """
            INSERT INTO blob (sha256, byte_size, chunk_count, held) VALUES (\(sha256), \(byteSize), \(chunkCount), TRUE)
            ON CONFLICT (sha256) DO UPDATE SET byte_size = excluded.byte_size, chunk_count = excluded.chunk_count, held = TRUE
            """)
        for number in 0..<chunkCount {
            let data = ByteBuffer(bytes: try handle.read(upToCount: chunkSize) ?? Data())
            try write("INSERT INTO blob_chunk (sha256, number, data) VALUES (\(sha256), \(number), \(data))")
        }
    }

    /// Deletes a blob (its chunks and uploaders go with it) if no attachment uses it and no
    /// uploader keeps it.
    private func freeBlobIfUnused(_ sha256: String) throws {
        try write(
            """
            DELETE FROM blob WHERE sha256 = \(sha256)
            AND NOT EXISTS (SELECT 1 FROM attachment WHERE sha256 = \(sha256))
            AND NOT EXISTS (SELECT 1 FROM blob_uploader WHERE sha256 = \(sha256))
            """)
    }

    func recordBlobUploader(sha256: String, uploader: String, time: Double) throws {
        try write(BlobUploadRows.recordUploader(sha256: sha256, uploader: uploader, time: time))
    }

    // MARK: Blob uploads, written at once

    /// Locks the upload's row until the batch ends: another host adding to it waits.
    func blobUpload(sha256: String, uploader: String) throws -> BlobUpload? {
        try write(BlobUploadRows.lockUpload(sha256: sha256, uploader: uploader)).first.map(BlobUploadRows.upload)
    }

    func startBlobUpload(_ upload: BlobUpload) throws {
        try write(BlobUploadRows.delete(sha256: upload.sha256, uploader: upload.uploader))
        try write(BlobUploadRows.insert(upload))
    }

    func appendToBlobUpload(sha256: String, uploader: String, _ data: Data, time: Double) throws {
        try write(BlobUploadRows.append(sha256: sha256, uploader: uploader, data, time: time))
    }

    func blobUploadChunk(sha256: String, uploader: String, number: Int) throws -> Data? {
        let rows = try onNewConnectionIfLost { try run(BlobUploadRows.chunk(sha256: sha256, uploader: uploader, number: number)) }
        return try rows.first.map { Data(try $0.makeRandomAccess()["data"].decode(ByteBuffer.self).readableBytesView) }
    }

    func storeBlobUpload(sha256: String, uploader: String) throws {
        try write(BlobUploadRows.storeBlob(sha256: sha256, uploader: uploader))
    }

    func deleteBlobUpload(sha256: String, uploader: String) throws {
        try write(BlobUploadRows.delete(sha256: sha256, uploader: uploader))
    }

    func pruneBlobUploads(before time: Double) throws {
        try write(BlobUploadRows.pruneUploads(before: time))
        let unused = try write(BlobUploadRows.pruneUploaders(before: time)).map { try $0.makeRandomAccess()["sha256"].decode(String.self) }
        for sha256 in Set(unused) { try freeBlobIfUnused(sha256) }
    }

    // MARK: Statements

    /// Runs a statement that writes at once, inside the batch's transaction (opened here, by the
    /// first such statement) and the request's savepoint. A row another
    /// host's optimistic transaction wrote meanwhile (the same blob stored twice, a blob freed
    /// under a new attachment) or a deadlock with one is a ``StorageConflict``: the batch runs
    /// again, holding the others off. Returns the statement's rows.
    @discardableResult
    private func write(_ query: PostgresQuery) throws -> [PostgresRow] {
        try send(transaction.beforeWrite())
        return try conflictsAsStorageConflict { try run(query) }
    }

    /// Runs `body`, turning what another host's concurrent transaction can cause — a unique or
    /// foreign-key violation, a serialization failure, a deadlock — into a ``StorageConflict``.
    private func conflictsAsStorageConflict<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PSQLError where error.sqlState.map(PostgresErrors.conflicts.contains) ?? false {
            throw StorageConflict(error.serverInfo?[.message] ?? "another host wrote the same rows")
        }
    }

    /// Runs `query` and waits for its rows: on the open connection, or on a new one unless a
    /// transaction was open — the rest of it would run outside one, on the new connection.
    /// `commits` marks the statement that commits the batch.
    @discardableResult
    private func run(_ query: PostgresQuery, commits: Bool = false) throws -> [PostgresRow] {
        do {
            return try link.run(query, mayConnect: { transaction.needsConnection() }, handingOver: { if commits { commitHandedOver = true } })
        } catch {
            // Inside a request's savepoint, rolling back to it keeps the transaction; outside a
            // transaction a failed statement leaves nothing behind.
            transaction.statementFailed()
            throw error
        }
    }

    /// Sends `statements` in order, each once the one before succeeded, and records each in
    /// ``transaction``.
    private func send(_ statements: [WriterTransaction.Statement]) throws {
        for statement in statements {
            try run(PostgresQuery(unsafeSQL: statement.rawValue), commits: statement == .commit)
            transaction.sent(statement)
        }
    }

    /// Closes the connection (the next statement makes a new one).
    func close() {
        transaction.connectionClosed()
        link.close()
    }
}
