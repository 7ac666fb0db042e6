import Foundation
import PrefsKit

/// A storage's write connection, lent to the engine by ``PrefsStorage/withWriter(_:)`` and
/// ``PrefsStorage/asyncWithWriter(_:)``
/// for one group commit: a transaction, savepoints for the requests in it that need one, and the
/// SQL of every change. The engine decides what to write; the connection only writes it.
///
/// Every call runs synchronously on the thread the storage lent the connection on.
package protocol WriteConnection {
    // MARK: Transactions

    /// How the connection begins and commits a batch's transaction: as the database's one writer,
    /// or alongside others.
    var transactions: WriteTransactions { get }

    /// Rolls the transaction back, unless the database already has.
    func rollback()

    /// Runs `body` in a savepoint, rolled back if it throws.
    func savepoint<T>(_ body: () throws -> T) throws -> T

    /// Throws if the database has rolled the transaction back by itself (a full disk, an I/O
    /// error): nothing may run outside the transaction.
    func checkTransactionIsOpen() throws

    /// `error` as a ``PrefsError`` callers understand, when it is one of the database's own.
    func translate(_ error: any Error) -> any Error

    /// The storage's upkeep between two batches, outside any transaction, once the last batch's
    /// requests are answered: SQLite copies its WAL into the database here when it has grown
    /// long. A writer that drains batch after batch under a steady load calls it after each, as
    /// such upkeep would otherwise wait for the load to pause. It never fails: upkeep that cannot
    /// run now runs at a later call.
    func betweenBatches()

    // MARK: Preferences

    /// Stores `value` for `key` at `scope`, set by `revision`.
    func upsertValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws
    /// Removes `key`'s value at `scope`.
    func deleteValue(key: String, scope: ScopePath) throws
    /// Stores a lock on `key` at `scope`, made by `revision`.
    func insertLock(key: String, scope: ScopePath, revision: Revision) throws
    /// Removes the lock on `key` at `scope`.
    func deleteLock(key: String, scope: ScopePath) throws
    /// Stores `schema` for `key`, registered by `revision`.
    func upsertSchema(key: String, schema: PreferenceSchema, revision: Revision) throws

    // MARK: Tokens

    /// Stores a new named token; `conflict` if its name is taken.
    func insertToken(_ token: StoredToken) throws
    /// Removes the named token `name`.
    func deleteToken(named name: String) throws

    // MARK: Change log

    /// Appends a committed change to the log, with its time, author and reason.
    func appendChange(_ change: LoggedChange) throws
    /// Drops the log's rows before `oldestRevision` — but those that set an entry stored now (a
    /// value, lock or schema whose revision they are), so that no current state is left
    /// unexplained — recording it as the oldest kept in full and `newestRevision` as the newest
    /// at the time.
    func compactChangeLog(keepingFrom oldestRevision: Revision, newestRevision: Revision) throws
    /// The first revision committed at or after `time` (seconds since 1970), as this transaction
    /// sees the log; nil if none was.
    func firstRevision(committedSince time: Double) throws -> Revision?

    // MARK: Idempotent requests

    /// The outcomes stored under any of `keys` (``StoredOutcome``), by key, as this transaction
    /// sees them.
    ///
    /// Where writers run side by side, the batch's commit also makes sure that none of the keys
    /// looked up and not found was stored by another writer in the meantime (else it throws
    /// ``StorageConflict``, and the batch runs again).
    func storedOutcomes(forKeys keys: [String]) throws -> [String: StoredOutcome]
    /// Stores a request's outcome under its key, in the batch's transaction; the storage fills in
    /// ``StoredOutcome/shift`` as it commits.
    func storeOutcome(_ outcome: StoredOutcome) throws
    /// Drops the outcomes stored before `time` (seconds since 1970).
    func pruneOutcomes(storedBefore time: Double) throws

    // MARK: Sync, an upstream's side

    /// The highest sequence number taken in from `device` (0: none yet). Where writers run side
    /// by side, it holds the device's row until the transaction ends, so that two exchanges of
    /// one device are taken in one after the other.
    func appliedSequence(ofDevice device: String) throws -> Int64
    /// Stores the highest sequence number taken in from `device`.
    func storeAppliedSequence(_ sequence: Int64, ofDevice device: String) throws
    /// The newest `set` or `reset` of `key` at `scope` after revision `after` that the log holds,
    /// as this transaction sees it (with its ``LoggedChange/stamp``); nil if there is none.
    ///
    /// When the log holds none, the newest one compaction dropped after `after` (from
    /// `compacted_entry`: its kind, revision, time and stamp, no value) — so that a reset of an
    /// entry absent now still counts. Dropped rows are always older than the rows the log keeps
    /// of the entry, so only a log with nothing newer falls back.
    func lastChange(of key: String, at scope: ScopePath, after: Revision) throws -> LoggedChange?
    /// Stores a conflict sync resolved, under the revision of its `conflict` change (which
    /// moves with the batch's revisions, like the change's row, where the storage commits the
    /// batch after other writers' changes).
    func insertConflict(_ conflict: SyncConflict) throws
    /// A draft's version at `revision` (nil: its latest), as this transaction sees it; nil if
    /// none is kept.
    func draftVersion(of id: UUID, at revision: Int64?) throws -> DraftVersion?
    /// Stores a draft's version, made at `time` (seconds since 1970), and drops the draft's
    /// versions made before `time` less ``DraftVersion`` retention (30 days) but the latest.
    func storeDraftVersion(_ version: DraftVersion, time: Double) throws

    // MARK: Sync, a replica's side

    /// Stores the replica's record (one per database).
    func storeReplicaRecord(_ record: ReplicaRecord) throws
    /// Appends a local change to the outbox.
    func appendOutbox(_ mutation: SyncRequest.Mutation) throws
    /// Appends a local draft change to the outbox (its sequence shared with preference changes).
    func appendDraftOutbox(_ mutation: DraftMutation) throws
    /// Removes the outbox entries with these sequence numbers, preference or draft changes.
    func deleteOutbox(sequences: [Int64]) throws
    /// Stores what the replica took in from its upstream for an entry; nil removes it.
    func storeSyncBase(_ base: SyncBase?, for entry: SyncEntry) throws
    /// Stores what the replica took in from its upstream of a draft; nil removes it.
    func storeDraftBase(_ base: DraftBase?, for id: UUID) throws

    // MARK: Drafts

    /// One draft with its attachments, as this transaction sees it.
    func draft(_ id: UUID) throws -> Draft?
    /// Drafts of an account and/or a thread, as this transaction sees them, ordered by account,
    /// thread, position, creation.
    func drafts(account: String?, thread: String?) throws -> [Draft]
    /// Stores a new draft (its attachments are stored one by one).
    func insertDraft(_ draft: Draft) throws
    /// Stores a draft's fields.
    func updateDraft(_ draft: Draft) throws
    /// Removes a draft and its attachments, and frees the bytes nothing else uses.
    func deleteDraft(_ draft: Draft) throws
    /// Stores a new attachment (its bytes are already stored).
    func insertAttachment(_ attachment: Attachment) throws
    /// Stores an attachment's position and alt text.
    func updateAttachment(_ attachment: Attachment) throws
    /// Removes an attachment, and frees its bytes if nothing else uses them.
    func deleteAttachment(_ attachment: Attachment) throws

    // MARK: Blobs

    /// Whether bytes with this hash are stored (not only known of, as ``noteBlob(sha256:byteSize:)``
    /// records them).
    func blobExists(sha256: String) throws -> Bool
    /// Records the blob `sha256` of `byteSize` bytes as known and not held: an attachment may use
    /// it, and a replica fetches its bytes from its upstream when it is read. Nothing changes if
    /// the blob is recorded already.
    func noteBlob(sha256: String, byteSize: Int64) throws
    /// Stores the bytes of `file` under their hash, in chunks, never holding the whole file; a blob
    /// known and not held becomes held.
    func insertBlob(sha256: String, byteSize: Int64, from file: URL) throws
    /// Records that `uploader` sent the stored blob `sha256` at `time` (seconds since 1970), or
    /// sent it again then: a blob keeps its uploaders until it goes, and is kept for a while after
    /// its last one sent it (``pruneBlobUploads(before:)``).
    func recordBlobUploader(sha256: String, uploader: String, time: Double) throws

    // MARK: Blob uploads

    /// The upload of `sha256` by `uploader` under way, as this transaction sees it; nil if there
    /// is none.
    func blobUpload(sha256: String, uploader: String) throws -> BlobUpload?
    /// Stores a new upload (``BlobUpload/received`` 0, no chunks), replacing the one of the same
    /// blob by the same uploader and its bytes, if any.
    func startBlobUpload(_ upload: BlobUpload) throws
    /// Appends `data` to the upload of `sha256` by `uploader` as its next chunk, counting it in
    /// its bytes received, at `time`.
    func appendToBlobUpload(sha256: String, uploader: String, _ data: Data, time: Double) throws
    /// Chunk `number` of the upload of `sha256` by `uploader`; nil if it has none such.
    func blobUploadChunk(sha256: String, uploader: String, number: Int) throws -> Data?
    /// Makes the bytes of the upload of `sha256` by `uploader` — all in, hashed — the blob's
    /// where they are, without copying them (a blob known and not held becomes held): the upload
    /// stays, whole, until the blob goes, and its bytes go with it. The blob is not stored yet,
    /// or only known.
    func storeBlobUpload(sha256: String, uploader: String) throws
    /// Removes the upload of `sha256` by `uploader` and its bytes, unless they are a blob's.
    func deleteBlobUpload(sha256: String, uploader: String) throws
    /// Drops the uploads under way (none that holds a blob's bytes) that last received bytes
    /// before `time` (seconds since 1970),
    /// and the uploaders recorded before it of blobs no attachment uses — freeing those blobs
    /// once nothing keeps them (an attachment, another uploader, a download reading them).
    func pruneBlobUploads(before time: Double) throws
}
