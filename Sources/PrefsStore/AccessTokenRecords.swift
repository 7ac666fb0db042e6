internal import GRDB
import PrefsEngine
import PrefsKit

/// The SQL for named tokens' rows: read when the store opens and by `token list`, written in
/// the writer's transaction as tokens are created and revoked, and when they were last used.
enum AccessTokenRecords {
    /// Every token.
    static func fetchAll(_ db: Database) throws -> [StoredToken] {
        try Row.fetchAll(
            db, sql: "SELECT name, role, scope, secret_sha256, created_at, created_by, last_used_at FROM access_token ORDER BY name"
        ).map { row in
            StoredToken(
                name: row["name"], role: try AccessRole(named: row["role"]), scope: try ScopePath(row["scope"]),
                secretSHA256: row["secret_sha256"], createdAt: row["created_at"], createdBy: row["created_by"],
                lastUsedAt: row["last_used_at"])
        }
    }

    static func insert(_ db: Database, _ token: StoredToken) throws {
        try db.execute(
            sql: """
                INSERT INTO access_token (name, role, scope, secret_sha256, created_at, created_by)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [token.name, token.role.rawValue, token.scope.path, token.secretSHA256, token.createdAt, token.createdBy])
    }

    static func delete(_ db: Database, named name: String) throws {
        try db.execute(sql: "DELETE FROM access_token WHERE name = ?", arguments: [name])
    }

    /// Records when tokens were last used, keeping a later time already recorded.
    static func recordUse(_ db: Database, _ lastUsed: [String: Double]) throws {
        for (name, time) in lastUsed {
            try db.execute(
                sql: "UPDATE access_token SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE name = ?",
                arguments: [time, name])
        }
    }
}
