import Foundation
import Logging
import NIOCore
import PostgresNIO
import PrefsKit
import Synchronization
@testable import PrefsPostgres
import TestHarness
import Testing

/// A statement handed to a connection as it closes is never answered by the driver: every wait
/// for PostgreSQL's answer ends once its connection has closed — the writer's, a pooled read's,
/// the listener's — instead of lasting for ever.
@Suite("PostgreSQL: no wait outlasts its connection", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(2)))
struct ClosedConnectionWatchTests {
    static let logger = Logger(label: "prefsd-tests")

    /// A new connection to `database`.
    static func connect(_ database: PostgresTestDatabase) async throws -> PostgresConnection {
        let location = try PostgresLocation(url: database.url)
        return try await PostgresConnection.connect(
            configuration: .init(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: .disable),
            id: 1, logger: logger)
    }

    /// A connection to `database`, and one of its statements handed over once it has closed.
    static func statementAsItCloses(_ database: PostgresTestDatabase) async throws -> (PostgresConnection, EventLoopFuture<PostgresQueryResult>) {
        let connection = try await connect(database)
        try await connection.close()
        return (connection, connection.query("SELECT 1", logger: logger))
    }

    /// Runs the blocking `body` on a thread of its own, off the concurrency pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    @Test("A statement of the writer's handed to a connection once it has closed fails as a lost connection")
    func aWriterWaitEndsWithItsConnection() async throws {
        try await withPostgresDatabase { database in
            // Left to the driver, such a statement is never answered, neither rows nor error:
            // without the watch this wait would last until the suite's time limit.
            let (connection, _) = try await Self.statementAsItCloses(database)
            let watched = WatchedConnection(connection, logger: Self.logger)
            let error = await #expect(throws: ChannelError.self) {
                try await Self.onThread { try watched.query("SELECT 1", logger: Self.logger) }
            }
            #expect(error == .ioOnClosedChannel)
        }
    }

    @Test("The writer's statements are answered while its connection is open, then fail once it closes under them")
    func aWriterWaitEndsWhenItsConnectionCloses() async throws {
        try await withPostgresDatabase { database in
            let watched = WatchedConnection(try await Self.connect(database), logger: Self.logger)
            #expect(try await Self.onThread { try watched.query("SELECT 1", logger: Self.logger).rows.count } == 1)
            // Closed by the server as a statement waits: the driver's error or the watch's, a lost connection either way.
            let waiting = Task { try await Self.onThread { try watched.query("SELECT pg_sleep(30)", logger: Self.logger) } }
            try await database.connection { connection, logger in
                try await waitUntil("the writer's statement runs") {
                    try await connection.query("SELECT 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'", logger: logger)
                        .collect().count == 1
                }
                _ = try await connection.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'", logger: logger)
            }
            await #expect(throws: (any Error).self) { try await waiting.value }
            #expect(watched.isClosed)
        }
    }

    @Test("A pooled read whose connection closes under it fails unavailable")
    func aReadEndsWithItsConnection() async throws {
        try await withPostgresDatabase { database in
            let location = try PostgresLocation(url: database.url)
            let pool = ReadingPool(
                configuration: PostgresClient.Configuration(
                    host: location.host, port: location.port, username: location.username, password: location.password,
                    database: location.database, tls: .disable),
                location: location, logger: Self.logger)
            defer { pool.close() }
            let refusal = await #expect(throws: PrefsError.self) {
                try await pool.withConnection { connection in
                    try await connection.close()
                    return try await connection.query("SELECT 1", logger: Self.logger).collect().count
                }
            }
            #expect(refusal?.code == .unavailable)
            // The pool goes on with a new connection.
            let count = try await ReadingPoolTests.retryingWhileUnavailable {
                try await pool.withConnection { try await $0.query("SELECT 1", logger: Self.logger).collect().count }
            }
            #expect(count == 1)
        }
    }

    @Test("Waiting on a connection that closes under the wait throws; a task that ends first returns; cancelling the caller ends it too")
    func anAsyncWaitEndsWithItsConnection() async throws {
        try await withPostgresDatabase { database in
            let (connection, answer) = try await Self.statementAsItCloses(database)
            await #expect(throws: ChannelError.self) {
                try await ClosedConnectionWatch.run(on: connection) { _ = try await answer.get() }
            }

            let open = try await Self.connect(database)
            let answered = Mutex(false)
            try await ClosedConnectionWatch.run(on: open) {
                _ = try await open.query("SELECT 1", logger: Self.logger).collect()
                answered.withLock { $0 = true }
            }
            #expect(answered.withLock { $0 })

            // A body that ends only with the test: its stream is never fed.
            let (never, feeding) = AsyncStream.makeStream(of: Void.self)
            let waiting = Task { try await ClosedConnectionWatch.run(on: open) { for await _ in never {} } }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            feeding.finish()
            try await open.close()
        }
    }
}
