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

    @Test("The driver never answers a statement handed to a connection as it closes; the watched wait fails as a lost connection")
    func aWriterWaitEndsWithItsConnection() async throws {
        try await withPostgresDatabase { database in
            let (connection, answer) = try await Self.statementAsItCloses(database)
            // What the watch is for: left to the driver, no answer comes, neither rows nor error.
            let unwatched = connection.eventLoop.makePromise(of: Bool.self)
            answer.whenComplete { _ in unwatched.succeed(true) }
            connection.eventLoop.scheduleTask(in: .seconds(3)) { unwatched.succeed(false) }
            #expect(try await unwatched.futureResult.get() == false, "the driver answered after all: the watch may no longer be needed")

            let started = ContinuousClock.now
            let error = await #expect(throws: ChannelError.self) {
                try await Self.onThread { try ClosedConnectionWatch.wait(for: answer, on: connection) }
            }
            #expect(error == .ioOnClosedChannel)
            #expect(ContinuousClock.now - started < .seconds(30), "ended by the watch, not by the suite's time limit")
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

            let waiting = Task { try await ClosedConnectionWatch.run(on: open) { try await Task.sleep(for: .seconds(600)) } }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            try await open.close()
        }
    }
}
