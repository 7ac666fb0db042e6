import Foundation
import PostgresNIO
import PrefsKit
import Testing

/// A PostgreSQL database of a test's own, created on the server `PREFSD_TEST_POSTGRES` names
/// (`postgresql://USER@HOST:PORT/postgres`, as `Scripts/postgres-for-tests.sh` prints it) and
/// dropped when the test ends, so that tests run in parallel without seeing each other's rows.
///
/// Without `PREFSD_TEST_POSTGRES`, PostgreSQL tests are skipped — except in CI (`CI=true`),
/// where a missing server fails the run instead.
public struct PostgresTestDatabase: Sendable {
    /// The server tests use, if one is configured.
    public static let serverURL = ProcessInfo.processInfo.environment["PREFSD_TEST_POSTGRES"]

    /// Whether PostgreSQL tests run: a server is configured, or this is CI (where they must run,
    /// and fail if the server is missing).
    public static let isEnabled = serverURL != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// The database's URL, for a `PostgresStore` or `prefsd --postgres`.
    public let url: String
    /// The database's name.
    public let name: String

    /// Creates a new, empty database, on the tests' server or on `server`.
    public static func create(on server: String? = nil) async throws -> PostgresTestDatabase {
        guard let serverURL = server ?? serverURL else {
            throw PrefsError(
                .unavailable,
                "PostgreSQL tests need a server: set PREFSD_TEST_POSTGRES (Scripts/postgres-for-tests.sh starts one).")
        }
        let name = "prefsd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try await Self.admin(serverURL) { connection, logger in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var components = URLComponents(string: serverURL)!
        components.path = "/" + name
        return PostgresTestDatabase(url: components.string!, name: name, serverURL: serverURL)
    }

    /// The server the database is on.
    let serverURL: String

    /// Drops the database, closing whatever is still connected to it.
    public func drop() async {
        try? await Self.admin(serverURL) { connection, logger in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        }
    }

    /// Runs `body` on a connection to the server's own database.
    @discardableResult
    public static func admin<T>(
        _ serverURL: String, _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let components = URLComponents(string: serverURL)!
        let logger = Logger(label: "prefsd-tests")
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
                password: components.password, database: String(components.path.dropFirst()), tls: .disable),
            id: 99, logger: logger)
        do {
            let result = try await body(connection, logger)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Runs `body` on a connection to this database, to look at its rows or act as another writer.
    public func connection<T>(_ body: (PostgresConnection, Logger) async throws -> T) async throws -> T {
        try await Self.admin(url, body)
    }
}

/// Runs `body` with a database of its own, dropped afterwards (also when `body` throws).
public func withPostgresDatabase<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (PostgresTestDatabase) async throws -> T
) async throws -> T {
    let database = try await PostgresTestDatabase.create()
    return try await withCleanup(isolation: isolation) { try await body(database) } cleanup: { await database.drop() }
}

/// A PostgreSQL server of a test's own (`Scripts/postgres-for-tests.sh`), for tests that stop it.
public struct OwnPostgresServer: Sendable {
    /// `postgresql://postgres@127.0.0.1:PORT/postgres`.
    public let url: String
    /// The cluster's folder.
    let folder: String

    /// The script that starts, pauses, resumes and stops servers: `Scripts/` at the package root,
    /// three levels up from this file (`Tests/TestHarness/`).
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Scripts/postgres-for-tests.sh").path

    /// Stops the server at once, as a crash would.
    public func pause() async throws {
        try await Self.runScript(["pause", folder])
    }

    /// Starts the server again, on the same port.
    public func resume() async throws {
        try await Self.runScript(["resume", folder])
    }

    @discardableResult
    static func runScript(_ arguments: [String]) async throws -> String {
        let result = try await CommandResult.runTool("/bin/bash", [script] + arguments)
        guard result.status == 0 else {
            throw PrefsError(.unavailable, "postgres-for-tests.sh \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdout
    }
}

/// Runs `body` with a PostgreSQL server of its own, stopped and removed afterwards.
public func withOwnPostgresServer<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (OwnPostgresServer) async throws -> T
) async throws -> T {
    let output = try await OwnPostgresServer.runScript(["start"])
    func exported(_ name: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("export \(name)=") }.map { String($0.dropFirst("export \(name)=".count)) }
    }
    guard let url = exported("PREFSD_TEST_POSTGRES"), let folder = exported("PREFSD_TEST_POSTGRES_DIR") else {
        throw PrefsError(.unavailable, "postgres-for-tests.sh start printed no server: \(output)")
    }
    let server = OwnPostgresServer(url: url, folder: folder)
    return try await withCleanup(isolation: isolation) { try await body(server) } cleanup: {
        _ = try? await OwnPostgresServer.runScript(["stop", folder])
    }
}
