import Foundation
import Logging
import PostgresNIO
import PrefsKit

/// Brings a PostgreSQL database to this build's schema: the migrations of `Migrations/postgres/`,
/// each applied once, in order, in a transaction of its own — under an advisory lock, so that
/// hosts starting together migrate once. A database that holds migrations this build does not
/// know (a newer prefsd's) is refused, untouched.
enum PostgresMigrator {
    /// The advisory lock migrations take (an arbitrary constant: "prefsd" in ASCII).
    static let lockKey: Int64 = 0x7072_6566_7364

    /// Applies the missing migrations on `connection` — up to the one named `last` and no further,
    /// if given (as GRDB's `migrate(_:upTo:)`: a test's database of an earlier schema).
    static func migrate(_ connection: PostgresConnection, location: PostgresLocation, logger: Logger, upTo last: String? = nil)
        async throws
    {
        try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
        do {
            try await migrateLocked(connection, location: location, logger: logger, upTo: last)
            try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
            throw error
        }
    }

    private static func migrateLocked(_ connection: PostgresConnection, location: PostgresLocation, logger: Logger, upTo last: String?)
        async throws
    {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS prefsd_migration (
                identifier text NOT NULL PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var applied: Set<String> = []
        for try await identifier in try await connection.query("SELECT identifier FROM prefsd_migration", logger: logger)
            .decode(String.self)
        {
            applied.insert(identifier)
        }
        let known = EmbeddedMigrations.postgres.map(\.name)
        let unknown = applied.subtracting(known)
        guard unknown.isEmpty else {
            throw PrefsError(
                .unavailable,
                "The database \(location) was written by a newer prefsd (it has migrations "
                    + "\(unknown.sorted().joined(separator: ", ")) that this build does not know); prefsd did not touch it. Upgrade prefsd.")
        }
        for (identifier, sql) in EmbeddedMigrations.postgres where !applied.contains(identifier) && last.map({ identifier <= $0 }) ?? true {
            try await connection.query("BEGIN", logger: logger)
            do {
                for statement in statements(of: sql) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO prefsd_migration (identifier) VALUES (\(identifier))", logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// The statements of a migration file: its text split at each `;` that ends a line outside a
    /// `$$`-quoted body, with comment lines dropped. (Migration files keep to that form.)
    static func statements(of sql: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        var inBody = false
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard inBody || !trimmed.hasPrefix("--") else { continue }
            current.append(line)
            if line.components(separatedBy: "$$").count % 2 == 0 { inBody.toggle() }
            if !inBody, trimmed.hasSuffix(";") {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        let rest = current.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }
}
