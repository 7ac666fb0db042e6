import PostgresNIO
import PrefsEngine
import PrefsKit

/// The SQL for named tokens' rows, and what their rows decode to.
enum TokenRows {
    /// Every token, by name.
    static let all: PostgresQuery =
        "SELECT name, role, scope, secret_sha256, created_at, created_by, last_used_at FROM access_token ORDER BY name"

    /// A token's row, as ``all`` selects it.
    static func token(_ row: PostgresRow) throws -> StoredToken {
        let row = row.makeRandomAccess()
        return StoredToken(
            name: try row["name"].decode(String.self), role: try AccessRole(named: row["role"].decode(String.self)),
            scope: try ScopePath(row["scope"].decode(String.self)), secretSHA256: try row["secret_sha256"].decode(String.self),
            createdAt: try row["created_at"].decode(Double.self), createdBy: try row["created_by"].decode(String.self),
            lastUsedAt: try row["last_used_at"].decode(Double?.self))
    }

    static func insert(_ token: StoredToken) -> PostgresQuery {
        """
        INSERT INTO access_token (name, role, scope, secret_sha256, created_at, created_by)
        VALUES (\(token.name), \(token.role.rawValue), \(token.scope.path), \(token.secretSHA256), \(token.createdAt), \(token.createdBy))
        """
    }

    static func delete(named name: String) -> PostgresQuery {
        "DELETE FROM access_token WHERE name = \(name)"
    }

    /// Records when each token was last used, keeping a later time another host recorded: one
    /// statement for them all.
    static func recordUse(_ lastUsed: [String: Double]) -> PostgresQuery {
        let names = Array(lastUsed.keys)
        let times = names.map { lastUsed[$0]! }
        return """
            UPDATE access_token t SET last_used_at = greatest(coalesce(t.last_used_at, 0), u.time)
            FROM unnest(\(names)::text[], \(times)::double precision[]) AS u(name, time)
            WHERE t.name = u.name
            """
    }
}
