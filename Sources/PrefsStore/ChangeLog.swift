import Foundation
import GRDB
import PrefsKit

/// One row of the change log: a committed change, with what it replaced.
struct LoggedChange: Sendable, Hashable {
    /// The change as watchers see it.
    var event: ChangeEvent
    /// For `set`/`reset`: the value it replaced (nil: none); for `schema`: the previous schema's JSON.
    var oldValue: String?
}

/// The change log: every committed change, one row per revision, written in the transaction of
/// the change itself, read back to replay a resumed watch.
enum ChangeLog {
    /// The newest revision committed and the oldest one the log still holds.
    static func bounds(_ db: Database) throws -> (current: Revision, oldest: Revision) {
        let row = try Row.fetchOne(db, sql: "SELECT current_revision, oldest_revision FROM change_log_state")!
        return (row[0], row[1])
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

    /// Records `revision` as the newest, and drops rows beyond the newest `retain`; returns the
    /// oldest revision the log then holds (never below `oldest`, the one it held before).
    static func finish(_ db: Database, revision: Revision, retain: Int, oldest: Revision) throws -> Revision {
        let oldest = max(oldest, revision - Revision(retain) + 1)
        try db.cachedStatement(sql: "UPDATE change_log_state SET current_revision = ?, oldest_revision = ?")
            .execute(arguments: [revision, oldest])
        // Compaction is cheap per commit: the rows it removes are the few that just fell out.
        try db.cachedStatement(sql: "DELETE FROM change WHERE revision < ?").execute(arguments: [oldest])
        return oldest
    }

    /// Like ``changes(_:after:through:limit:)``, but throws `compacted` if the log no longer holds
    /// every change after `revision` — checked in the same read, so compaction cannot slip in between.
    static func unbrokenChanges(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws
        -> [LoggedChange]
    {
        let oldest = try bounds(db).oldest
        guard revision >= oldest - 1 else { throw PrefsError.compacted(since: revision, oldest: oldest) }
        return try changes(db, after: revision, through: through, limit: limit)
    }

    /// The changes after `revision` up to `through`, in order, at most `limit` of them.
    static func changes(_ db: Database, after revision: Revision, through: Revision, limit: Int) throws -> [LoggedChange] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT revision, kind, key, scope, value, old_value, draft, attachment,
                       account, thread, previous_thread, draft_revision, valid
                FROM change
                WHERE revision > ? AND revision <= ? ORDER BY revision LIMIT ?
                """,
            arguments: [revision, through, limit]
        ).map { row in
            LoggedChange(
                event: ChangeEvent(
                    revision: row[0], kind: ChangeEvent.Kind(rawValue: row[1]), key: row[2],
                    scope: try (row[3] as String?).map { try ScopePath($0) },
                    value: try (row[4] as String?).map { try JSONValue(parsing: $0) },
                    draft: row[6], attachment: row[7], account: row[8], thread: row[9], previousThread: row[10],
                    draftRevision: row[11], valid: row[12]
                ),
                oldValue: row[5]
            )
        }
    }
}
