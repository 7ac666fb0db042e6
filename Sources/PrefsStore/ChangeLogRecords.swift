import Foundation
internal import GRDB
internal import GRDBSQLite
import PrefsEngine
import PrefsKit

/// The change log: every committed change, one row per revision, written in the transaction of
/// the change itself, read back to replay a resumed watch.
enum ChangeLogRecords {
    /// The newest revision committed and the oldest one the log still holds.
    ///
    /// `change_log_state` is written only when the log is compacted (see ``compact(_:keepingFrom:newest:)``),
    /// so the newest revision is the log's last row, or the state's if it is newer (before any
    /// change, or in a database an earlier version kept).
    static func bounds(_ db: Database) throws -> (current: Revision, oldest: Revision) {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT max(current_revision, ifnull((SELECT max(revision) FROM change), 0)) AS newest, oldest_revision
                FROM change_log_state
                """
        )!
        return (row["newest"], row["oldest_revision"])
    }

    static func append(_ db: Database, _ change: LoggedChange, at time: Double) throws {
        let event = change.event
        try db.cachedStatement(
            sql: """
                INSERT INTO change (
                    revision, kind, key, scope, value, old_value, draft, attachment,
                    account, thread, previous_thread, draft_revision, valid, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                event.revision, event.kind.rawValue, event.key, event.scope?.path, event.value?.canonicalText,
                change.oldValue, event.draft, event.attachment, event.account, event.thread, event.previousThread,
                event.draftRevision, event.valid, time,
            ]
        )
    }

    /// Drops the rows before `oldest`, and records it as the oldest kept and `newest` as the
    /// newest revision then (the state row is written only when the log is compacted).
    static func compact(_ db: Database, keepingFrom oldest: Revision, newest: Revision) throws {
        try db.cachedStatement(sql: "UPDATE change_log_state SET current_revision = ?, oldest_revision = ?")
            .execute(arguments: [newest, oldest])
        try db.cachedStatement(sql: "DELETE FROM change WHERE revision < ?").execute(arguments: [oldest])
    }

    /// The changes after `revision` up to `through`, at most `limit` of them, and the oldest
    /// revision the log holds — in one read, so that compaction cannot slip in between.
    static func page(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws -> ChangeLogPage {
        ChangeLogPage(
            changes: try changes(db, after: revision, through: through, limit: limit), oldestRevision: try bounds(db).oldest)
    }

    /// The change log's newest revision, 0 if it is empty: one integer, stepped through SQLite's C
    /// API on a statement compiled once (GRDB's generic fetch of one value costs ten times the
    /// query).
    static func newestLoggedRevision(_ db: Database) throws -> Revision {
        let statement = try db.cachedStatement(sql: "SELECT ifnull(max(revision), 0) FROM change").sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else {
            let connection = db.sqliteConnection
            throw DatabaseError(
                resultCode: ResultCode(rawValue: sqlite3_errcode(connection)), message: String(cString: sqlite3_errmsg(connection)))
        }
        return sqlite3_column_int64(statement, 0)
    }

    /// The changes after `revision` up to `through`, in order, at most `limit` of them.
    static func changes(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws -> [LoggedChange] {
        // The writer asks at every transaction, and with one writer there is nothing after the
        // engine's own revision: rows are read only when the log has some (making a row cursor
        // alone costs more than all of a write's other reads).
        guard try newestLoggedRevision(db) > revision else { return [] }
        // Compiled once per connection: every transaction of the writer runs it.
        let statement = try db.cachedStatement(
            sql: """
                SELECT revision, kind, key, scope, value, old_value, draft, attachment,
                       account, thread, previous_thread, draft_revision, valid
                FROM change
                WHERE revision > ? AND revision <= ? ORDER BY revision LIMIT ?
                """)
        return try Row.fetchAll(statement, arguments: [revision, through, limit]).map { row in
            LoggedChange(
                event: ChangeEvent(
                    revision: row["revision"], kind: ChangeEvent.Kind(rawValue: row["kind"]), key: row["key"],
                    scope: try (row["scope"] as String?).map { try ScopePath($0) },
                    value: try (row["value"] as String?).map { try JSONValue(parsing: $0) },
                    draft: row["draft"], attachment: row["attachment"], account: row["account"], thread: row["thread"],
                    previousThread: row["previous_thread"], draftRevision: row["draft_revision"], valid: row["valid"]
                ),
                oldValue: row["old_value"]
            )
        }
    }
}
