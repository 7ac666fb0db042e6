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

    /// Appends a committed change, with its time, author, reason and stamp.
    static func append(_ db: Database, _ change: LoggedChange) throws {
        let event = change.event
        try db.run(
            """
            INSERT INTO change (
                revision, kind, key, scope, value, old_value, old_revision, draft, attachment, account, thread,
                previous_thread, draft_revision, valid, created_at, author, agent, host, reason, stamp)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { row in
            row.bind(event.revision)
            row.bind(event.kind.rawValue)
            row.bind(event.key)
            row.bind(event.scope?.path)
            row.bind(event.value?.canonicalText)
            row.bind(change.oldValue)
            row.bind(change.oldRevision)
            row.bind(event.draft)
            row.bind(event.attachment)
            row.bind(event.account)
            row.bind(event.thread)
            row.bind(event.previousThread)
            row.bind(event.draftRevision)
            row.bind(event.valid)
            row.bind(change.time)
            row.bind(change.author?.name)
            row.bind(change.author?.agent)
            row.bind(change.author?.host)
            row.bind(change.reason)
            row.bind(change.stamp?.description)
        }
    }

    /// Drops the rows before `oldest` but those that set an entry stored now, and records `oldest`
    /// as the oldest kept in full and `newest` as the newest revision then (the state row is
    /// written only when the log is compacted). For each key, scope and kind among the rows it
    /// drops, it first records the newest row dropped — its revision, stamp and time
    /// (`compacted_entry`, unless a newer one is there) — so that a reader can tell whether what
    /// it follows lost a change, and sync can still resolve against a dropped reset.
    static func compact(_ db: Database, keepingFrom oldest: Revision, newest: Revision) throws {
        try db.cachedStatement(sql: "UPDATE change_log_state SET current_revision = ?, oldest_revision = ?")
            .execute(arguments: [newest, oldest])
        // With max() the only aggregate, SQLite takes the bare columns (stamp, created_at) from
        // the row of the highest revision.
        try db.cachedStatement(
            sql: """
                INSERT INTO compacted_entry (key, scope, kind, revision, stamp, time)
                SELECT key, ifnull(scope, ''), kind, max(revision), stamp, created_at FROM change
                WHERE revision < ? AND key IS NOT NULL AND revision NOT IN (\(storedRevisions))
                GROUP BY key, ifnull(scope, ''), kind
                ON CONFLICT (key, scope, kind) DO UPDATE
                SET revision = excluded.revision, stamp = excluded.stamp, time = excluded.time
                WHERE excluded.revision > compacted_entry.revision
                """
        ).execute(arguments: [oldest])
        try db.cachedStatement(
            sql: "DELETE FROM change WHERE revision < ? AND revision NOT IN (\(storedRevisions))"
        ).execute(arguments: [oldest])
    }

    /// The revisions of the values, locks and schemas stored now: compaction keeps their rows.
    private static let storedRevisions = """
        SELECT revision FROM preference UNION ALL SELECT revision FROM preference_lock \
        UNION ALL SELECT revision FROM preference_schema
        """

    /// The newest revision compaction dropped among the rows `filter` selects (its key, prefix,
    /// subtree, scopes, reach and kinds); 0 if none.
    static func newestCompactedAway(_ db: Database, matching filter: ChangeLogFilter) throws -> Revision {
        let (sql, parameters) = filter.newestCompactedAwaySQL(.sqlite)
        return try Revision.fetchOne(db, sql: sql, arguments: arguments(parameters)) ?? 0
    }

    /// A filter's parameters as GRDB's arguments.
    private static func arguments(_ parameters: [ChangeLogFilter.Parameter]) -> StatementArguments {
        StatementArguments(
            parameters.map { parameter -> (any DatabaseValueConvertible)? in
                switch parameter {
                case .text(let text): text
                case .integer(let integer): integer
                case .real(let real): real
                }
            })
    }

    /// The first revision committed at or after `time`, nil if none was.
    static func firstRevision(_ db: Database, committedSince time: Double) throws -> Revision? {
        // Times rise with revisions: from the oldest end, the first one found is the one.
        try Revision.fetchOne(
            db, sql: "SELECT revision FROM change WHERE created_at >= ? ORDER BY revision LIMIT 1", arguments: [time])
    }

    /// The rows `filter` selects, at most `limit`, and the oldest revision the log holds in full.
    static func page(_ db: Database, matching filter: ChangeLogFilter, limit: Int) throws -> ChangeLogPage {
        let (sql, parameters) = filter.sql(.sqlite, limit: limit)
        let changes = try Row.fetchAll(db, sql: sql, arguments: arguments(parameters)).map(loggedChange)
        return ChangeLogPage(changes: changes, oldestRevision: try bounds(db).oldest)
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

    /// The keyed changes after `revision` up to `through`, oldest first, at most `limit` of them.
    static func keyedRevisions(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws
        -> [KeyedRevision]
    {
        var found: [KeyedRevision] = []
        try db.run(
            """
            SELECT key, revision, kind = 'schema' FROM change
            WHERE revision > ? AND revision <= ? AND key IS NOT NULL ORDER BY revision LIMIT ?
            """,
            binding: { row in
                row.bind(revision)
                row.bind(through)
                row.bind(limit)
            }
        ) { row in
            found.append(KeyedRevision(key: row.text(0), revision: row.integer(1), isSchema: row.integer(2) != 0))
        }
        return found
    }

    /// The changes after `revision` up to `through`, in order, at most `limit` of them.
    static func changes(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws -> [LoggedChange] {
        // The writer asks at every transaction, and with one writer there is nothing after the
        // engine's own revision: rows are read only when the log has some (making a row cursor
        // alone costs more than all of a write's other reads).
        guard try newestLoggedRevision(db) > revision else { return [] }
        // Compiled once per connection: every transaction of the writer runs it.
        let statement = try db.cachedStatement(
            sql: "SELECT \(ChangeLogFilter.columns) FROM change WHERE revision > ? AND revision <= ? ORDER BY revision LIMIT ?")
        return try Row.fetchAll(statement, arguments: [revision, through, limit]).map(loggedChange)
    }

    /// The newest `set` or `reset` of `key` at `scope` after `revision`, as the transaction sees
    /// the log, else the newest one compaction dropped (``compactedChange(_:of:at:after:)``); nil
    /// if there is none. No index serves it but the primary key's: the log is read from its
    /// newest end down to `revision`.
    static func lastChange(_ db: Database, of key: String, at scope: ScopePath, after revision: Revision) throws -> LoggedChange? {
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(ChangeLogFilter.columns) FROM change
                WHERE revision > ? AND key = ? AND scope = ? AND kind IN ('set', 'reset') ORDER BY revision DESC LIMIT 1
                """)
        if let logged = try Row.fetchOne(statement, arguments: [revision, key, scope.path]) { return try loggedChange(logged) }
        return try compactedChange(db, of: key, at: scope, after: revision)
    }

    /// The newest `set` or `reset` of `key` at `scope` after `revision` that compaction dropped,
    /// from `compacted_entry` (no value); nil if none.
    private static func compactedChange(_ db: Database, of key: String, at scope: ScopePath, after revision: Revision) throws
        -> LoggedChange?
    {
        let statement = try db.cachedStatement(
            sql: """
                SELECT kind, revision, time, stamp FROM compacted_entry
                WHERE key = ? AND scope = ? AND kind IN ('set', 'reset') AND revision > ?
                ORDER BY revision DESC LIMIT 1
                """)
        return try Row.fetchOne(statement, arguments: [key, scope.path, revision]).map { row in
            LoggedChange(
                compacted: ChangeEvent.Kind(rawValue: row[0]), key: key, scope: scope, revision: row[1], time: row[2],
                stamp: try (row[3] as String?).map { try SyncStamp(stored: $0) })
        }
    }

    /// A row of ``ChangeLogFilter/columns`` as a logged change.
    private static func loggedChange(_ row: Row) throws -> LoggedChange {
        LoggedChange(
            event: ChangeEvent(
                revision: row[0], kind: ChangeEvent.Kind(rawValue: row[1]), key: row[2],
                scope: try (row[3] as String?).map { try ScopePath($0) },
                value: try (row[4] as String?).map { try JSONValue(parsing: $0) },
                draft: row[7], attachment: row[8], account: row[9], thread: row[10],
                previousThread: row[11], draftRevision: row[12], valid: row[13]
            ),
            oldValue: row[5], oldRevision: row[6], time: row[14],
            author: (row[15] as String?).map { ChangeAuthor(name: $0, agent: row[16], host: row[17]) }, reason: row[18],
            stamp: try (row[19] as String?).map { try SyncStamp(stored: $0) }
        )
    }
}
