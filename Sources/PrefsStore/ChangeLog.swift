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
    ///
    /// `change_log_state` is written only when the log is compacted (see ``compact(_:revision:retain:oldest:)``),
    /// so the newest revision is the log's last row, or the state's if it is newer (before any
    /// change, or in a database an earlier version kept).
    static func bounds(_ db: Database) throws -> (current: Revision, oldest: Revision) {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT max(current_revision, ifnull((SELECT max(revision) FROM change), 0)), oldest_revision
                FROM change_log_state
                """
        )!
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

    /// Drops the rows beyond the newest `retain` once there are more than `retain / 32` of
    /// them, and returns the oldest revision the log then holds (`oldest`, the one it held
    /// before, if it did not compact).
    ///
    /// The log keeps at least `retain` changes. Compacting in steps rather than at every commit
    /// spares each commit the two extra pages a per-commit compaction writes (the state row and
    /// the log's first leaf): with `--durability full`, every page is part of the sync a
    /// client's acknowledgement waits for.
    static func compact(_ db: Database, revision: Revision, retain: Int, oldest: Revision) throws -> Revision {
        let kept = revision - oldest + 1
        guard kept > Revision(retain + retain / 32) else { return oldest }
        let oldest = revision - Revision(retain) + 1
        try db.cachedStatement(sql: "UPDATE change_log_state SET current_revision = ?, oldest_revision = ?")
            .execute(arguments: [revision, oldest])
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
