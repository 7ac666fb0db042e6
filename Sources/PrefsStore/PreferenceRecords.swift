import Foundation
import GRDB
import PrefsKit

/// The SQL for preference rows: values, locks and schemas. Called inside the writer's
/// transaction, and once at open to fill the cache.
enum PreferenceRecords {
    /// Every key's stored state, read once when the store opens.
    static func loadAll(_ db: Database) throws -> [String: KeyState] {
        var keys: [String: KeyState] = [:]
        // At most one key per row: sized once, the dictionary is not rehashed as it grows.
        keys.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM preference") ?? 0)
        // In key order (the primary key's, so no sort): each key's values are gathered, then
        // stored once, rather than its state being looked up and copied for every row.
        let values = try Row.fetchCursor(db, sql: "SELECT key, scope, value, revision FROM preference ORDER BY key")
        var gathering: (key: String, values: [ScopePath: StoredValue])?
        while let row = try values.next() {
            let key: String = row[0]
            let stored = StoredValue(value: try JSONValue(parsing: row[2] as String), revision: row[3])
            let scope = try ScopePath(row[1])
            if gathering?.key == key {
                gathering!.values[scope] = stored
            } else {
                if let (key, values) = gathering { keys[key] = KeyState(values: values) }
                gathering = (key, [scope: stored])
            }
        }
        if let (key, values) = gathering { keys[key] = KeyState(values: values) }
        let locks = try Row.fetchCursor(db, sql: "SELECT key, scope, revision FROM preference_lock")
        while let row = try locks.next() {
            keys[row[0] as String, default: KeyState()].locks[try ScopePath(row[1])] = row[2]
        }
        let schemas = try Row.fetchCursor(db, sql: "SELECT key, definition FROM preference_schema")
        while let row = try schemas.next() {
            let schema = try PreferenceSchema(json: Data((row[1] as String).utf8))
            keys[row[0] as String, default: KeyState()].schema = schema
        }
        return keys
    }

    static func upsertValue(_ db: Database, key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO preference (key, scope, value, revision) VALUES (?, ?, ?, ?)
                ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value, revision = excluded.revision
                """
        ).execute(arguments: [key, scope.path, value.canonicalText, revision])
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

extension PreferenceSchema {
    /// The schema as sorted-key JSON, the form the store keeps.
    var canonicalText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
