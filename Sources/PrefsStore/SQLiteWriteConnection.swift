import Foundation
internal import GRDB
internal import GRDBSQLite
import PrefsEngine
import PrefsKit

/// The SQLite writer connection, lent to the engine for one group commit: `BEGIN IMMEDIATE`,
/// savepoints for the requests that need one, and the SQL of every change (``PreferenceRecords``,
/// ``DraftRecords``, ``ChangeLogRecords``). Transaction statements are compiled once per
/// connection, not parsed for every batch or request.
struct SQLiteWriteConnection: WriteConnection, ExclusiveTransactions {
    let db: Database
    let storage: SQLiteStorage

    /// SQLite has one writer: a transaction always holds off the others (other processes'
    /// connections), and is never rebased.
    var transactions: WriteTransactions { .exclusive(self) }

    /// `BEGIN IMMEDIATE`, and the changes committed after `revision` by anything else: this
    /// process owns the database, so there are none, and reading them costs one look-up in the
    /// change log's primary key.
    func begin(after revision: Revision) throws -> ChangeLogPage {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        return ChangeLogPage(
            changes: try ChangeLogRecords.changes(db, after: revision, through: .max, limit: .max), oldestRevision: 0)
    }

    /// Checkpoints the WAL once it holds ``SQLiteStorage/checkpointFrames`` frames or more.
    func betweenBatches() {
        storage.checkpointIfLong(db)
    }

    func commit(newestRevision: Revision) throws {
        try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        storage.scheduleCheckpoint()
    }

    /// SQLite's own count (`sqlite3_total_changes64`): rows changed by `INSERT`, `UPDATE` and
    /// `DELETE` statements that completed, those of triggers included.
    var rowsChanged: Int {
        Int(sqlite3_total_changes64(db.sqliteConnection))
    }

    func rollback() {
        // GRDB's rollback: only if SQLite has not rolled back already.
        try? db.rollback()
    }

    /// GRDB's `inSavepoint`, inside a transaction, with its statements compiled once per
    /// connection rather than once per request, and run through SQLite's C API. If SQLite rolls
    /// the transaction back midway, rolling back to the savepoint fails, harmlessly.
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try db.run("SAVEPOINT request")
        do {
            let value = try body()
            try db.run("RELEASE SAVEPOINT request")
            return value
        } catch {
            // Rolling back alone would leave the savepoint on SQLite's stack. The first error is
            // the one to report, as GRDB's `inSavepoint` does.
            try? db.run("ROLLBACK TRANSACTION TO SAVEPOINT request")
            try? db.run("RELEASE SAVEPOINT request")
            throw error
        }
    }

    /// GRDB's transaction block makes every statement throw once SQLite has rolled the
    /// transaction back by itself (after `SQLITE_FULL`, `SQLITE_IOERR`…); the engine checks before
    /// each request instead, so no request's statements ever run outside the transaction.
    func checkTransactionIsOpen() throws {
        guard db.isInsideTransaction else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "Transaction was aborted")
        }
    }

    func translate(_ error: any Error) -> any Error {
        SQLiteErrors.translate(error)
    }

    func upsertValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws {
        try PreferenceRecords.upsertValue(db, key: key, scope: scope, value: value, revision: revision)
    }

    func deleteValue(key: String, scope: ScopePath) throws {
        try PreferenceRecords.deleteValue(db, key: key, scope: scope)
    }

    func insertLock(key: String, scope: ScopePath, revision: Revision) throws {
        try PreferenceRecords.insertLock(db, key: key, scope: scope, revision: revision)
    }

    func deleteLock(key: String, scope: ScopePath) throws {
        try PreferenceRecords.deleteLock(db, key: key, scope: scope)
    }

    func insertToken(_ token: StoredToken) throws {
        try AccessTokenRecords.insert(db, token)
    }

    func deleteToken(named name: String) throws {
        try AccessTokenRecords.delete(db, named: name)
    }

    func upsertSchema(key: String, schema: PreferenceSchema, revision: Revision) throws {
        try PreferenceRecords.upsertSchema(db, key: key, schema: schema, revision: revision)
    }

    func appendChange(_ change: LoggedChange) throws {
        try ChangeLogRecords.append(db, change)
    }

    func compactChangeLog(keepingFrom oldestRevision: Revision, newestRevision: Revision) throws {
        try ChangeLogRecords.compact(db, keepingFrom: oldestRevision, newest: newestRevision)
    }

    func firstRevision(committedSince time: Double) throws -> Revision? {
        try ChangeLogRecords.firstRevision(db, committedSince: time)
    }

    func storedOutcomes(forKeys keys: [String]) throws -> [String: StoredOutcome] {
        try IdempotentRequestRecords.fetch(db, keys: keys)
    }

    func storeOutcome(_ outcome: StoredOutcome) throws {
        try IdempotentRequestRecords.insert(db, outcome)
    }

    func pruneOutcomes(storedBefore time: Double) throws {
        try IdempotentRequestRecords.prune(db, storedBefore: time)
    }

    func appliedSequence(ofDevice device: String) throws -> Int64 {
        try SyncRecords.appliedSequence(db, ofDevice: device)
    }

    func storeAppliedSequence(_ sequence: Int64, ofDevice device: String) throws {
        try SyncRecords.storeAppliedSequence(db, sequence, ofDevice: device)
    }

    func lastChange(of key: String, at scope: ScopePath, after: Revision) throws -> LoggedChange? {
        try ChangeLogRecords.lastChange(db, of: key, at: scope, after: after)
    }

    /// SQLite never moves a batch's revisions: the conflict is stored under the one it has.
    func insertConflict(_ conflict: SyncConflict) throws {
        try SyncRecords.insertConflict(db, conflict)
    }

    func draftVersion(of id: UUID, at revision: Int64?) throws -> DraftVersion? {
        try DraftSyncRecords.draftVersion(db, of: id, at: revision)
    }

    func storeDraftVersion(_ version: DraftVersion, time: Double) throws {
        try DraftSyncRecords.storeDraftVersion(db, version, time: time)
    }

    func storeReplicaRecord(_ record: ReplicaRecord) throws {
        try SyncRecords.storeReplicaRecord(db, record)
    }

    func appendOutbox(_ mutation: SyncRequest.Mutation) throws {
        try SyncRecords.appendOutbox(db, mutation)
    }

    func appendDraftOutbox(_ mutation: DraftMutation) throws {
        try DraftSyncRecords.appendDraftOutbox(db, mutation)
    }

    func deleteOutbox(sequences: [Int64]) throws {
        try SyncRecords.deleteOutbox(db, sequences: sequences)
        try DraftSyncRecords.deleteDraftOutbox(db, sequences: sequences)
    }

    func storeSyncBase(_ base: SyncBase?, for entry: SyncEntry) throws {
        try SyncRecords.storeSyncBase(db, base, for: entry)
    }

    func storeDraftBase(_ base: DraftBase?, for id: UUID) throws {
        try DraftSyncRecords.storeDraftBase(db, base, for: id)
    }

    func draft(_ id: UUID) throws -> Draft? {
        try DraftRecords.fetch(db, id: id)
    }

    func drafts(account: String?, thread: String?) throws -> [Draft] {
        try DraftRecords.fetchAll(db, account: account, thread: thread)
    }

    func insertDraft(_ draft: Draft) throws {
        try DraftRecords.insert(db, draft)
    }

    func updateDraft(_ draft: Draft) throws {
        try DraftRecords.update(db, draft)
    }

    func deleteDraft(_ draft: Draft) throws {
        try DraftRecords.delete(db, draft)
        for sha256 in Set(draft.attachments.map(\.sha256)) { try freeBlobIfUnused(sha256) }
    }

    func insertAttachment(_ attachment: Attachment) throws {
        try DraftRecords.insert(db, attachment)
    }

    func updateAttachment(_ attachment: Attachment) throws {
        try DraftRecords.update(db, attachment)
    }

    func deleteAttachment(_ attachment: Attachment) throws {
        try DraftRecords.delete(db, attachment)
        try freeBlobIfUnused(attachment.sha256)
    }

    /// Frees the bytes `sha256` if no attachment uses them and no download is reading them (the
    /// last download to end frees them then).
    private func freeBlobIfUnused(_ sha256: String) throws {
        guard !storage.blobHolds.isHeld(sha256) else { return }
        try DraftRecords.freeBlobIfUnused(db, sha256: sha256)
    }

    func blobExists(sha256: String) throws -> Bool {
        try DraftRecords.blobExists(db, sha256: sha256)
    }

    func noteBlob(sha256: String, byteSize: Int64) throws {
        try DraftRecords.noteBlob(db, sha256: sha256, byteSize: byteSize)
    }

    func insertBlob(sha256: String, byteSize: Int64, from file: URL) throws {
        try DraftRecords.insertBlob(db, sha256: sha256, byteSize: byteSize, from: file)
    }

    func recordBlobUploader(sha256: String, uploader: String, time: Double) throws {
        try BlobUploadRecords.recordUploader(db, sha256: sha256, uploader: uploader, time: time)
    }

    func blobUpload(sha256: String, uploader: String) throws -> BlobUpload? {
        try BlobUploadRecords.fetch(db, sha256: sha256, uploader: uploader)
    }

    func startBlobUpload(_ upload: BlobUpload) throws {
        try BlobUploadRecords.start(db, upload)
    }

    func appendToBlobUpload(sha256: String, uploader: String, _ data: Data, time: Double) throws {
        try BlobUploadRecords.append(db, sha256: sha256, uploader: uploader, data, time: time)
    }

    func blobUploadChunk(sha256: String, uploader: String, number: Int) throws -> Data? {
        try BlobUploadRecords.chunk(db, sha256: sha256, uploader: uploader, number: number)
    }

    func storeBlobUpload(sha256: String, uploader: String) throws {
        try BlobUploadRecords.store(db, sha256: sha256, uploader: uploader)
    }

    func deleteBlobUpload(sha256: String, uploader: String) throws {
        try BlobUploadRecords.delete(db, sha256: sha256, uploader: uploader)
    }

    func pruneBlobUploads(before time: Double) throws {
        for sha256 in try BlobUploadRecords.prune(db, before: time) { try freeBlobIfUnused(sha256) }
    }
}
