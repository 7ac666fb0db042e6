import Foundation
import PrefsKit

/// A database under a ``PrefsEngine``: it keeps the rows, runs one write transaction at a time,
/// and reads back drafts, attachments' bytes and the change log. Only SQL, transactions and blob
/// I/O: every rule (resolution, locks, schemas, revisions, validation, watches) is the engine's,
/// so a new backend implements this protocol and touches neither the engine nor the server.
///
/// `PrefsStore`'s `SQLiteStorage` keeps a SQLite file that one process owns;
/// `PrefsPostgres`'s `PostgresStorage` shares a PostgreSQL database between any number of hosts.
/// Applications do not call a storage: they use the engine (`EmbeddedStore`, `PostgresStore`).
package protocol PrefsStorage: Sendable {
    /// Where the data lives, as ``ServiceStatus/database`` shows it (a path, or a URL without its
    /// password).
    var location: String { get }

    /// Whether the engine may run a transaction on the thread that asks for one — true when a
    /// transaction never waits on an event loop (SQLite), false when it does (PostgreSQL's
    /// driver answers on NIO's event loops, which must never block).
    var commitsOnCallingThread: Bool { get }

    /// Whether other processes write to the database too (several hosts on PostgreSQL): then the
    /// engine may not have taken in the database's newest revisions yet, and waits for them
    /// where a caller names one.
    var hasOtherWriters: Bool { get }

    /// Where uploads are staged, each in a file of its own, until they are whole.
    var stagingFolder: URL { get }

    /// Every key's stored state and the change log's bounds, as committed now: what the engine
    /// keeps in memory.
    func loadSnapshot() throws -> StorageSnapshot

    /// Runs `body` with exclusive use of the storage's write connection, on the calling thread
    /// (waiting while another caller has it), and returns what it returns. The engine calls it
    /// only where ``commitsOnCallingThread`` allows, and when it closes.
    func withWriter<T>(_ body: (any WriteConnection) throws -> T) rethrows -> T

    /// Runs `body` with exclusive use of the storage's write connection, soon, on the storage's
    /// own writer thread.
    func asyncWithWriter(_ body: @escaping @Sendable (any WriteConnection) -> Void)

    /// Calls `wake` (from any thread) whenever other writers may have committed changes the
    /// engine has not taken in: after a notification — with the revision it announces — and,
    /// with nil, after a reconnection and on a periodic safety tick. The change log is the truth;
    /// a wake-up only says when to read it. A storage with one writer never calls it.
    func observeCommitsElsewhere(_ wake: @escaping @Sendable (_ announced: Revision?) -> Void)

    /// The changes after `revision` up to `through`, in order, at most `limit` of them, and the
    /// oldest revision the log held when they were read (in the same read, so that compaction
    /// cannot slip in between).
    func changeLog(after revision: Revision, through: Revision, limit: Int) async throws -> ChangeLogPage

    /// The rows `filter` selects, in its order, at most `limit` of them, with their times,
    /// authors and reasons; and the oldest revision the log held in full, in the same read.
    func changeLog(matching filter: ChangeLogFilter, limit: Int) async throws -> ChangeLogPage

    /// The keyed changes after `revision` up to `through`, oldest first, at most `limit` of
    /// them: their keys, revisions and whether each is a schema's — what the key index
    /// (``KeyRevisions``) is rebuilt from, without reading the changes' values.
    func keyedRevisions(after revision: Revision, through: Revision, limit: Int) async throws -> [KeyedRevision]

    /// The newest revision compaction dropped among the changes the key, prefix, subtree,
    /// scopes, reach and kinds of `filter` select; 0 if it dropped none. Compaction records it
    /// (`compacted_entry`: per key, scope and kind) in the transaction that drops the rows, so a
    /// reader that read the log and then this learns of every row dropped before its read of
    /// the log: none of the changes it follows after a revision R is lost if this is R or less.
    func newestCompactedAway(matching filter: ChangeLogFilter) async throws -> Revision

    /// The conflicts `query` selects, in revision order (newest first if it asks), at most its
    /// limit.
    func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict]

    /// Every named token, with when each was last used as recorded.
    func tokens() async throws -> [StoredToken]

    /// Records when tokens were last used (by name, seconds since 1970), keeping a later time
    /// another host recorded. Outside the change log: using a token changes nothing.
    func recordTokenUse(_ lastUsed: [String: Double]) async throws

    /// The newest revision committed to the database, by this engine or any other writer.
    func newestRevision() async throws -> Revision

    /// One draft with its attachments.
    func draft(_ id: UUID) async throws -> Draft?

    /// Drafts of an account and/or a thread, ordered by account, thread, position, creation.
    func drafts(account: String?, thread: String?) async throws -> [Draft]

    /// Draft `id`'s versions from revision `from` through `through` that are kept, in order.
    func draftVersions(of id: UUID, from: Int64, through: Int64) async throws -> [DraftVersion]

    /// Opens a blob's bytes for reading: they stay readable, whole, until the reader is closed,
    /// even if the last attachment using them goes meanwhile. Nil if there is no such blob.
    func openBlob(_ sha256: String) async throws -> (any BlobReading)?

    /// The size of the stored blob `sha256`; nil if there is none.
    func blobSize(sha256: String) async throws -> Int64?

    /// Who the stored blob `sha256` is of: the accounts whose drafts use it, and who uploaded it.
    func blobUsers(sha256: String) async throws -> BlobUsers

    /// The upload of `sha256` by `uploader` under way; nil if there is none.
    func blobUpload(sha256: String, uploader: String) async throws -> BlobUpload?

    /// Releases the database: later calls fail.
    func close()
}

/// A blob's bytes being read, one chunk at a time.
package protocol BlobReading: Sendable {
    /// The next chunk, nil after the last.
    func next() async throws -> Data?

    /// Ends the read: the storage may now free the bytes if nothing else uses them. Harmless once
    /// closed.
    func close()
}
