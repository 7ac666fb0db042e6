import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// The OpenFeature Remote Evaluation Protocol: OpenFeature's own Python SDK and OFREP provider
/// (`Scripts/ofrep-sdk-check.py`, run with the Python of the virtual environment `.ci/run` makes,
/// `PREFSD_TEST_OPENFEATURE_PYTHON`) read a real daemon on SQLite and on a PostgreSQL host; and
/// the protocol's shapes and refusals, from here.
@Suite("OFREP: OpenFeature reads prefsd", .timeLimit(.minutes(3)))
struct OFREPTests {
    /// The virtual environment's Python, with `openfeature-sdk` and `openfeature-provider-ofrep`.
    static let python = ProcessInfo.processInfo.environment["PREFSD_TEST_OPENFEATURE_PYTHON"]
    /// Whether the SDK tests run: the environment is there, or this is CI (where they must run,
    /// and fail if it is missing).
    static let sdkIsThere = python != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    static let script = Checkout.url("Scripts/ofrep-sdk-check.py").path

    /// The daemon the SDK reads: OFREP's contexts as tenants and users, one override.
    static func daemon(postgresURL: String? = nil) async throws -> (Daemon, UInt16) {
        let (daemon, port) = try await TCPListenerTests.daemon(
            token: "file-t0ken", postgresURL: postgresURL,
            arguments: ["--ofrep-scope", "/tenants/{tenant}/users/{targetingKey}", "--override", "flags.kill-switch=true"])
        try await TokenAccessTests.waitForListener(port, token: "file-t0ken")
        return (daemon, port)
    }

    /// Runs the SDK's checks against `daemon` with a reader token.
    static func sdkChecks(_ daemon: Daemon, _ port: UInt16) async throws {
        let python = try #require(Self.python, "PREFSD_TEST_OPENFEATURE_PYTHON is not set: .ci/run makes the virtual environment")
        let reader = try await daemon.client.createToken(named: "sdk", role: .reader, scope: .root).secret
        let prefsctl = CommandResult.binaries.appending(path: "prefsctl").path
        let result = try await CommandResult.runTool(python, [script, "http://127.0.0.1:\(port)", reader, prefsctl, daemon.socketPath])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test(.enabled(if: sdkIsThere)) func theSDKReadsADaemonOnSQLite() async throws {
        let (daemon, port) = try await Self.daemon()
        try await Self.sdkChecks(daemon, port)
        await daemon.expectCleanStop()
    }

    @Test(.enabled(if: sdkIsThere && PostgresTestDatabase.isEnabled)) func theSDKReadsAHostOnPostgres() async throws {
        try await withPostgresDatabase { database in
            let (daemon, port) = try await Self.daemon(postgresURL: database.url)
            try await Self.sdkChecks(daemon, port)
            await daemon.expectCleanStop()
        }
    }

    /// What the SDK cannot send: a body that is not JSON, a context that is not an object, a key
    /// no flag can have; a token whose scope does not reach the context's; a template refused at
    /// start.
    @Test func theProtocolsRefusals() async throws {
        let (daemon, port) = try await Self.daemon()
        try await daemon.client.set("flags.on", to: true, scope: "/tenants/acme")
        let path = "/ofrep/v1/evaluate/flags/flags.on"
        for (body, code) in [("{", "PARSE_ERROR"), (#"{"context": 3}"#, "PARSE_ERROR"), (#"{"context": {"tenant": "a/b"}}"#, "INVALID_CONTEXT"),
                             (#"{"context": {"tenant": {"id": 1}}}"#, "INVALID_CONTEXT")] {
            let answer = try await daemon.raw("POST", path, body: body)
            #expect(answer.status == 400, "\(body)")
            #expect(answer.body.contains(#""errorCode":"\#(code)""#) && answer.body.contains(#""key":"flags.on""#), "\(body): \(answer.body)")
        }
        let found = try await daemon.raw("POST", path, body: #"{"context": {"tenant": "acme"}}"#)
        #expect(found.status == 200)
        #expect(found.body.contains(#""reason":"TARGETING_MATCH""#) && found.body.contains(#""value":true"#))
        let elsewhere = try await daemon.raw("POST", path, body: #"{"context": {"tenant": "globex"}}"#)
        #expect(elsewhere.status == 404 && elsewhere.body.contains(#""errorCode":"FLAG_NOT_FOUND""#))
        let badKey = try await daemon.raw("POST", "/ofrep/v1/evaluate/flags/Not%20A%20Key", body: "{}")
        #expect(badKey.status == 404 && badKey.body.contains(#""errorCode":"FLAG_NOT_FOUND""#))
        let bulk = try await daemon.raw("POST", "/ofrep/v1/evaluate/flags", body: "[]")
        #expect(bulk.status == 400 && bulk.body.contains(#""errorCode":"PARSE_ERROR""#) && !bulk.body.contains(#""key""#))

        // A reader at /tenants/acme reads its tenant's flags, not another's.
        let acme = try await daemon.client.createToken(named: "acme", role: .reader, scope: "/tenants/acme").secret
        let connection = try TCPConnection(port: port)
        #expect(await connection.request("POST", path, token: acme, body: #"{"context": {"tenant": "acme"}}"#).status == 200)
        #expect(await connection.request("POST", path, token: acme, body: #"{"context": {"tenant": "globex"}}"#).status == 403)
        #expect(await connection.request("GET", "/ofrep/v1/configuration", token: acme).status == 200)
        await daemon.expectCleanStop()

        let refused = try await CommandResult.runTool(
            CommandResult.binaries.appending(path: "prefsd").path, ["--ofrep-scope", "/tenants/{tenant}x"])
        #expect(refused.status != 0 && refused.stderr.contains("--ofrep-scope"))
    }
}
