import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// The SQL for preference rows: values, locks and schemas. Called inside the writer's
/// transaction, and once at open to fill the cache.
enum PreferenceRecords {
    /// Adds every key's stored state to `builder`, read once when the store opens.
    static func loadAll(_ db: Database, into builder: inout StorageSnapshot.Builder) throws {
        // In key order (the primary key's, so no sort): each key's values are gathered at once.
        let values = try Row.fetchCursor(db, sql: "SELECT key, scope, value, revision FROM preference ORDER BY key")
        while let row = try values.next() {
            builder.addValue(
                key: row["key"], scope: try ScopePath(row["scope"]), value: try JSONValue(parsing: row["value"] as String),
                revision: row["revision"])
        }
        let locks = try Row.fetchCursor(db, sql: "SELECT key, scope, revision FROM preference_lock")
        while let row = try locks.next() {
            builder.addLock(key: row["key"], scope: try ScopePath(row["scope"]), revision: row["revision"])
        }
        let schemas = try Row.fetchCursor(db, sql: "SELECT key, definition FROM preference_schema")
        while let row = try schemas.next() {
            builder.addSchema(key: row["key"], schema: try PreferenceSchema(json: Data((row["definition"] as String).utf8)))
        }
    }

    static func upsertValue(_ db: Database, key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws {
        try db.run(
            """
            INSERT INTO preference (key, scope, value, revision) VALUES (?, ?, ?, ?)
            ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value, revision = excluded.revision
            """
        ) { row in
            row.bind(key)
            row.bind(scope.path)
            row.bind(value.canonicalText)
            row.bind(revision)
        }
    }

    static func deleteValue(_ db: Database, key: String, scope: ScopePath) throws {
        try db.cachedStatement(sql: "DELETE FROM preference WHERE key = ? AND scope = ?").execute(arguments: [key, scope.path])
    }

    static func insertLock(_ db: Database, key: String, scope: ScopePath, revision: Revision) throws {
        try db.execute(
            sql: "INSERT INTO preference_lock (key, scope, revision) VALUES (?, ?, ?)",
            arguments: [key, scope.path, revision]
        )
    }

    static func deleteLock(_ db: Database, key: String, scope: ScopePath) throws {
        try db.execute(sql: "DELETE FROM preference_lock WHERE key = ? AND scope = ?", arguments: [key, scope.path])
    }

    static func upsertSchema(_ db: Database, key: String, schema: PreferenceSchema, revision: Revision) throws {
        try db.execute(
            sql: """
                INSERT INTO preference_schema (key, definition, revision) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET definition = excluded.definition, revision = excluded.revision
                """,
            arguments: [key, schema.canonicalText, revision]
        )
    }
}
