import Foundation
import PostgresNIO
import PrefsKit
import PrefsPostgres
import TestHarness
import Testing

/// The PostgreSQL writer's connection between group commits: a batch of preference writes commits
/// in one statement that runs in a transaction of its own, so between batches the connection waits
/// outside any transaction — holding nothing, and a lost connection is made again at once.
@Suite("PostgreSQL: the writer's connection between commits", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(5)))
struct PostgresWriterTests {
    /// The state of the host's writer connection, as `pg_stat_activity` shows it.
    static func writerState(_ database: PostgresTestDatabase) async throws -> [String] {
        try await database.connection { connection, logger in
            var states: [String] = []
            for try await state in try await connection.query(
                "SELECT state FROM pg_stat_activity WHERE datname = \(database.name) AND application_name = 'prefsd writer'",
                logger: logger
            ).decode(String.self) {
                states.append(state)
            }
            return states
        }
    }

    @Test("Between commits the writer waits outside a transaction and holds no lock: another session locks every table at once")
    func idleTransactionHoldsNothing() async throws {
        try await withPostgresDatabase { database in
            try await withStore(PostgresStore(url: database.url)) { store in
                try await store.set("k", to: 1)
                #expect(try await Self.writerState(database) == ["idle"])
                try await database.connection { connection, logger in
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query(
                        "LOCK TABLE change_log_state, preference, preference_lock, preference_schema, change, draft IN ACCESS EXCLUSIVE MODE NOWAIT",
                        logger: logger)
                    try await connection.query("ROLLBACK", logger: logger)
                }
                #expect(try await store.set("k", to: 2).revision == 2)
            }
        }
    }

    @Test("A writer whose connection was cut while it waited writes again at once, on a new connection")
    func cutWhileIdle() async throws {
        try await withPostgresDatabase { database in
            try await withStore(PostgresStore(url: database.url)) { store in
                try await store.set("k", to: 1)
                _ = try await database.connection { connection, logger in
                    try await connection.query(
                        """
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = \(database.name) AND application_name = 'prefsd writer'
                        """, logger: logger)
                }
                #expect(try await store.set("k", to: 2).revision == 2)
                #expect(try await store.resolve("k").value == 2)
                #expect(try await Self.writerState(database) == ["idle"])
            }
        }
    }
}
