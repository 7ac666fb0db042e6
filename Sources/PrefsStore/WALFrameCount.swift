internal import GRDB
internal import GRDBSQLite
import Synchronization

/// How many frames a SQLite database's WAL holds, as SQLite reports it after each commit
/// (`sqlite3_wal_hook`): what tells the writer when to checkpoint
/// (``SQLiteStorage/checkpointIfLong(_:)``).
final class WALFrameCount: Sendable {
    private let frames = Atomic<Int>(0)

    /// The frames in the WAL after the last commit.
    var value: Int { frames.load(ordering: .relaxed) }

    /// Reports `db`'s commits to this count. The count must outlive the connection: the pool's
    /// configuration, which installs it on every connection it opens, holds it.
    func observe(_ db: Database) {
        guard let connection = db.sqliteConnection else { return }
        sqlite3_wal_hook(
            connection,
            { context, _, _, frames in
                Unmanaged<WALFrameCount>.fromOpaque(context!).takeUnretainedValue().frames.store(Int(frames), ordering: .relaxed)
                return SQLITE_OK
            },
            Unmanaged.passUnretained(self).toOpaque())
    }
}
