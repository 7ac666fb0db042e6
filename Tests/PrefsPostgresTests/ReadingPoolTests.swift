import Logging
import PostgresNIO
import PrefsKit
@testable import PrefsPostgres
import TestHarness
import Testing

/// The pool reads go through: a read whose connection does not come in time fails `unavailable`
/// instead of waiting forever, and the pool is made anew, so that the next read connects afresh.
@Suite("PostgreSQL: the pool reads go through", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(5)))
struct ReadingPoolTests {
    @Test("A read that gets no connection in time fails unavailable, and the next read goes through a new pool")
    func aPoolThatHandsOutNoConnectionIsReplaced() async throws {
        try await withPostgresDatabase { database in
            let location = try PostgresLocation(url: database.url)
            var configuration = PostgresClient.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: .disable)
            configuration.options.maximumConnections = 1
            let pool = ReadingPool(
                configuration: configuration, location: location, leaseWait: .milliseconds(500), logger: Logger(label: "prefsd-tests"))
            defer { pool.close() }
            let selectOne: @Sendable (PostgresConnection) async throws -> Int = { connection in
                try await connection.query("SELECT 1", logger: Logger(label: "prefsd-tests")).collect().count
            }

            // The pool's one connection, held by a read until the test lets it go.
            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let (release, releasing) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await Self.retryingWhileUnavailable {
                    try await pool.withConnection { _ in
                        holding.yield()
                        for await _ in release {}
                        return 0
                    }
                }
            }
            var heldIterator = held.makeAsyncIterator()
            await heldIterator.next()

            let refusal = await #expect(throws: PrefsError.self) { try await pool.withConnection(selectOne) }
            #expect(refusal?.code == .unavailable)
            #expect(refusal?.message.contains("no connection to read on came within") == true, "\(String(describing: refusal))")
            #expect(refusal?.message.contains("nothing was read. Retry once it is back.") == true, "a read stores nothing to speak of")
            // Through a new pool, whose connection nothing holds: the old one would never give one.
            #expect(try await Self.retryingWhileUnavailable { try await pool.withConnection(selectOne) } == 1)

            releasing.finish()
            _ = await holder.result
        }
    }

    /// `read`, again for as long as it fails `unavailable`: on a loaded machine, a new pool's
    /// first connection may take longer than the short wait the test allows.
    static func retryingWhileUnavailable<T>(_ read: () async throws -> T) async throws -> T {
        while true {
            do {
                return try await read()
            } catch let error as PrefsError where error.code == .unavailable {
                continue
            }
        }
    }
}
