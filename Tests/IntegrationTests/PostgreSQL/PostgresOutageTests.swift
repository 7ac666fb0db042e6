import Foundation
import PostgresNIO
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Writes sent while PostgreSQL is stopped, to a host that knows its writer's connection closed:
/// none of them can have committed, so each is refused `unavailable` at once — never held for the
/// lost-commit recovery's deadline and answered `outcome_unknown` — and none is applied once
/// PostgreSQL is back. (A commit whose answer is lost mid-flight still finds out what became of
/// it: `LostCommitTests`.)
@Suite("Writes while PostgreSQL is stopped", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(3)))
struct PostgresOutageTests {
    /// What the host logs once its writer's connection has closed under it.
    static let connectionClosed = "The writer's connection to PostgreSQL closed"

    /// The preference rows and drafts the outage's writes would have made, counted in the database.
    static func outageRows(_ database: PostgresTestDatabase) async throws -> Int64 {
        try await database.connection { connection, logger in
            let rows = try await connection.query(
                """
                SELECT (SELECT count(*) FROM preference WHERE key LIKE 'outage.during%')
                     + (SELECT count(*) FROM draft WHERE account = 'outage') AS count
                """, logger: logger
            ).collect()
            return try rows.first?.decode(Int64.self) ?? -1
        }
    }

    @Test("With PostgreSQL stopped, every kind of write is refused unavailable and applied nowhere; once it is back, writes go through")
    func writesDuringAnOutageAreRefusedUnavailable() async throws {
        // A server of the test's own: stopping the shared one would fail the other tests.
        try await withOwnPostgresServer { server in
            let database = try await PostgresTestDatabase.create(on: server.url)
            let host = try await Daemon(postgresURL: database.url)
            try await withCleanup {
                let before = try await host.client.set("outage.before", to: 1, scope: "/")
                try await server.pause()
                // Once the host has seen its connection close, no write can reach the server.
                try await waitUntil("the host sees its writer's connection close") {
                    host.standardError.contains(Self.connectionClosed)
                }

                let refused = await #expect(throws: PrefsError.self) {
                    try await host.client.set("outage.during.set", to: 1, scope: "/")
                }
                #expect(refused?.code == .unavailable)
                let writes: [(method: String, target: String, body: String, headers: [(String, String)])] = [
                    ("PUT", "/v1/prefs/outage.during.keyed?scope=/", "2", [("Idempotency-Key", UUID().uuidString)]),
                    // Judged on the state the host holds, it would succeed: only the commit fails.
                    ("PUT", "/v1/prefs/outage.before?scope=/", "3", [("If-Match", "\(before.revision)")]),
                    ("POST", "/v1/prefs:batch", #"{"operations":[{"op":"set","key":"outage.during.batch","scope":"/","value":4}]}"#, []),
                    ("POST", "/v1/drafts", #"{"account":"outage","text":"never stored"}"#, []),
                ]
                for write in writes {
                    // Each a second time too: the host keeps knowing its connection is gone.
                    for _ in 0..<2 {
                        let answer = try await host.raw(write.method, write.target, body: write.body, headers: write.headers)
                        #expect(answer.status == 503, "\(write.method) \(write.target): \(answer.body)")
                        #expect(answer.code == "unavailable", "\(write.method) \(write.target): \(answer.body)")
                    }
                }
                #expect(!host.standardError.contains("finding out whether it did"), "no write went to the lost-commit recovery")

                try await server.resume()
                var after: Revision?
                try await waitUntil("writes go through again") {
                    after = try? await host.client.set("outage.after", to: 1, scope: "/").revision
                    return after != nil
                }
                #expect(after == before.revision + 1, "nothing written during the outage took a revision")
                #expect(try await Self.outageRows(database) == 0, "nothing written during the outage is in the database")
                #expect(try await host.client.resolve("outage.during.keyed", scope: "/").isSet == false)
                #expect(try await host.client.resolve("outage.before", scope: "/").value == 1)
            } cleanup: {
                await host.stop()
            }
        }
    }
}
