import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Devices syncing through an upstream, all real daemons: an upstream prefsd listening on
/// loopback TCP, and device daemons (`prefsd --upstream URL --upstream-token-file FILE`), each
/// syncing as its own named token, driven with prefsctl as people do — a value set on one device
/// is read on the other, a device's token bounds what it may write, conflicts of devices that
/// wrote offline are listed on the upstream, and `prefsctl sync` tells how it stands.
@Suite("Sync between devices", .timeLimit(.minutes(5)))
struct SyncTests {
    /// The scope the devices' tokens are bounded by.
    static let scope = "/accounts/alice"
    static let scopePath: ScopePath = "/accounts/alice"

    /// An upstream on a free loopback port.
    static func upstream() async throws -> (daemon: Daemon, port: UInt16) {
        try await TCPListenerTests.daemon(token: "upstream-t0ken")
    }

    /// A writer token at ``scope`` on `upstream`, created with prefsctl; its secret.
    static func deviceToken(_ name: String, on upstream: Daemon, role: String = "writer") async throws -> String {
        let created = try await upstream.prefsctl("token", "create", name, "--role", role, "--scope", scope)
        #expect(created.status == 0, "\(created.stderr)")
        return created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A device daemon of the upstream at `url`, syncing as the token whose secret is `secret`
    /// (kept in a file of its own, 0600), with more `arguments`.
    static func device(of url: String, secret: String, arguments: [String] = []) async throws -> Daemon {
        let (folder, tokenFile) = try TCPListenerTests.folder(holdingToken: secret)
        return try await Daemon(arguments: ["--upstream", url, "--upstream-token-file", tokenFile] + arguments, folder: folder)
    }

    /// `prefsctl sync --wait` on `device`, expected to exit 0.
    static func syncWait(_ device: Daemon, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let synced = try await device.prefsctl("sync", "--wait", "--timeout", "30")
        #expect(synced.status == 0, "prefsctl sync --wait: \(synced.stderr)", sourceLocation: sourceLocation)
    }

    /// `prefsctl sync --json` on `device`.
    static func status(_ device: Daemon) async throws -> SyncStatus {
        let shown = try await device.prefsctl("sync", "--json")
        #expect(shown.status == 0, "\(shown.stderr)")
        return try WireJSON.decode(SyncStatus.self, from: Data(shown.stdout.utf8))
    }

    /// A value set on one device is read on the other once both have synced; each device says
    /// who it is and that it is in step; and a daemon with no upstream says it has none.
    @Test func aValueSetOnOneDeviceIsReadOnTheOther() async throws {
        let (upstream, port) = try await Self.upstream()
        let url = "http://127.0.0.1:\(port)"
        let laptop = try await Self.device(of: url, secret: try await Self.deviceToken("laptop", on: upstream))
        let phone = try await Self.device(of: url, secret: try await Self.deviceToken("phone", on: upstream))

        let set = try await laptop.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope)
        #expect(set.status == 0, "\(set.stderr)")
        try await Self.syncWait(laptop)
        try await Self.syncWait(phone)
        let read = try await phone.prefsctl("get", "ui.theme", "--scope", Self.scope)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "dark")
        let upstreamRead = try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope)
        #expect(upstreamRead.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "dark")

        // And back: the phone's change reaches the laptop.
        #expect(try await phone.prefsctl("set", "ui.fontSize", "14", "--scope", Self.scope).status == 0)
        try await Self.syncWait(phone)
        try await Self.syncWait(laptop)
        #expect(try await laptop.prefsctl("get", "ui.fontSize", "--scope", Self.scope).stdout.hasPrefix("14"))

        let status = try await Self.status(laptop)
        #expect(status.upstream == url)
        #expect(status.device == "laptop" && status.role == .writer && status.scope == Self.scopePath)
        #expect(status.outbox == 0 && status.snapshotTaken && status.isInStep, "\(status)")
        let shown = try await laptop.prefsctl("sync")
        #expect(shown.status == 0, "\(shown.stderr)")
        for part in [url, "laptop", "writer at \(Self.scope)", "outbox", "in step with the upstream"] {
            #expect(shown.stdout.contains(part), "prefsctl sync shows \(part): \(shown.stdout)")
        }

        // The daemon's status carries the same, and an upstream's none.
        let served = try await laptop.client.status()
        #expect(served.sync?.device == "laptop" && served.sync?.upstream == url, "\(served)")
        #expect(try await upstream.client.status().sync == nil)
        let human = try await laptop.prefsctl("status")
        #expect(human.stdout.contains("upstream") && human.stdout.contains("in step"), "\(human.stdout)")

        let none = try await upstream.prefsctl("sync")
        #expect(none.status == 1, "a daemon with no upstream: \(none.stdout) \(none.stderr)")
        #expect(none.stderr.contains("has no upstream"), "\(none.stderr)")
        let noneWaiting = try await upstream.prefsctl("sync", "--wait")
        #expect(noneWaiting.status == 1 && noneWaiting.stderr.contains("has no upstream"), "\(noneWaiting.stderr)")

        // Every exchange went as a frame of a device's sync stream, none as a request of its own.
        let metrics = try await upstream.raw("GET", "/v1/metrics").body
        #expect(metrics.contains(#"prefsd_requests_total{endpoint="POST /v1/sync:stream",status="200"} 2"#), "\(metrics)")
        #expect(!metrics.contains(#"prefsd_requests_total{endpoint="POST /v1/sync",status="200"}"#), "\(metrics)")

        await laptop.expectCleanStop()
        await phone.expectCleanStop()
        await upstream.expectCleanStop()
    }

    /// Once a device has synced, it knows its token's scope: a write beyond it is refused at
    /// once, on the device, with the exit status of `forbidden`, and nothing waits to be pushed.
    @Test func aWriteBeyondTheDevicesScopeIsRefusedAtOnce() async throws {
        let (upstream, port) = try await Self.upstream()
        let laptop = try await Self.device(
            of: "http://127.0.0.1:\(port)", secret: try await Self.deviceToken("laptop", on: upstream))
        try await Self.syncWait(laptop)

        let refused = try await laptop.prefsctl("set", "ui.theme", #""light""#, "--scope", "/accounts/bob")
        #expect(refused.status == PrefsError.Code.forbidden.exitCode, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("/accounts/bob"), "\(refused.stderr)")
        #expect(try await Self.status(laptop).outbox == 0, "a refused write is not pushed")
        let inside = try await laptop.prefsctl("set", "ui.theme", #""light""#, "--scope", "\(Self.scope)/threads/42")
        #expect(inside.status == 0, "\(inside.stderr)")

        await laptop.expectCleanStop()
        await upstream.expectCleanStop()
    }

    /// Two devices write the same key while their upstream is away; once it is back and both
    /// have synced, the upstream lists the conflict: by the key's rule (lww), the later change
    /// won, and the other device's value is kept as the loser. While the upstream is away,
    /// `prefsctl sync --wait` gives up with 69, saying why.
    @Test func conflictsOfDevicesThatWroteOfflineAreListedOnTheUpstream() async throws {
        let (upstream, port) = try await Self.upstream()
        let url = "http://127.0.0.1:\(port)"
        let laptop = try await Self.device(of: url, secret: try await Self.deviceToken("laptop", on: upstream))
        let phone = try await Self.device(of: url, secret: try await Self.deviceToken("phone", on: upstream))
        #expect(try await upstream.prefsctl("set", "ui.theme", #""plain""#, "--scope", Self.scope).status == 0)
        try await Self.syncWait(laptop)
        try await Self.syncWait(phone)

        // Offline: the upstream stops; both devices write the same key.
        await upstream.expectCleanStop()
        #expect(try await laptop.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        #expect(try await phone.prefsctl("set", "ui.theme", #""light""#, "--scope", Self.scope).status == 0)
        let away = try await laptop.prefsctl("sync", "--wait", "--timeout", "2")
        #expect(away.status == 69, "\(away.stdout) \(away.stderr)")
        #expect(away.stderr.contains("Not in step with \(url)") && away.stderr.contains("Cannot reach"), "\(away.stderr)")
        #expect(try await Self.status(laptop).outbox == 1, "the laptop's change waits in its outbox")

        // Back online: the laptop pushes first, then the phone, whose change is the later.
        try await upstream.start()
        try await Self.syncWait(laptop)
        try await Self.syncWait(phone)
        try await Self.syncWait(laptop)

        let listed = try await upstream.prefsctl("conflicts", "--json")
        #expect(listed.status == 0, "\(listed.stderr)")
        let conflicts = try WireJSON.decode(ConflictList.self, from: Data(listed.stdout.utf8)).conflicts
        #expect(conflicts.count == 1, "\(listed.stdout)")
        let conflict = try #require(conflicts.first)
        #expect(conflict.key == "ui.theme" && conflict.scope == Self.scopePath && conflict.rule == .init(.lww))
        #expect(conflict.winner.value == "light" && conflict.winner.device == "phone", "\(conflict)")
        #expect(conflict.losers.contains { $0.value == "dark" && $0.device == "laptop" }, "\(conflict)")
        // Every side has the winner now.
        for daemon in [upstream, laptop, phone] {
            let read = try await daemon.prefsctl("get", "ui.theme", "--scope", Self.scope)
            #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "light", "\(read.stdout)")
        }

        let table = try await upstream.prefsctl("conflicts", "--key", "ui.theme", "--since", "1h")
        #expect(table.status == 0, "\(table.stderr)")
        for part in ["REVISION", "ui.theme", Self.scope, "lww", "light (phone)", "dark (laptop)"] {
            #expect(table.stdout.contains(part), "prefsctl conflicts shows \(part): \(table.stdout)")
        }
        // The same through the Swift client.
        let client = upstream.client
        #expect(try await client.conflicts(scope: Self.scopePath, key: try KeyName("ui.theme"), since: 0, limit: 5, newestFirst: true) == conflicts)
        #expect(try await client.conflicts(from: Date(timeIntervalSinceNow: 3600)).isEmpty, "none from an hour ahead")
        #expect(try await client.conflicts(since: conflict.revision).isEmpty, "none after it")
        await #expect(throws: PrefsError.self) { try await client.syncStatus() }
        let status = try await phone.client.syncNow(timeout: .seconds(10))
        #expect(status.isInStep && status.device == "phone" && status.conflicts >= 0, "\(status)")
        #expect(try await phone.client.syncStatus().cursor == status.cursor)

        // The loser can be put back, and it travels to the devices like any change.
        let restored = try await upstream.prefsctl("revert", "--conflict", String(conflict.revision))
        #expect(restored.status == 0, "\(restored.stderr)")
        try await Self.syncWait(laptop)
        let back = try await laptop.prefsctl("get", "ui.theme", "--scope", Self.scope)
        #expect(back.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "dark", "\(back.stdout)")
        let missing = try await upstream.prefsctl("revert", "--conflict", String(conflict.revision), "--loser", "5")
        #expect(missing.status == 3, "\(missing.stderr)")

        let elsewhere = try await upstream.prefsctl("conflicts", "--scope", "/accounts/bob")
        #expect(elsewhere.status == 0 && elsewhere.stdout.contains("no conflicts"), "\(elsewhere.stdout)")

        await laptop.expectCleanStop()
        await phone.expectCleanStop()
        await upstream.expectCleanStop()
    }

    /// prefsd's refusals of a device's command line: a token file missing or empty, an upstream
    /// that is not http(s), an upstream with PostgreSQL, half of TLS.
    @Test(
        "prefsd refuses a device's bad command line",
        arguments: [
            (["--upstream", "http://127.0.0.1:1", "--upstream-token-file", "/nonexistent/token"], "Cannot read the upstream token file"),
            (["--upstream", "ftp://127.0.0.1:1", "--upstream-token-file", "$EMPTY"], "http://HOST:PORT or https://HOST:PORT"),
            (["--upstream", "http://127.0.0.1:1", "--upstream-token-file", "$EMPTY"], "is empty"),
            (["--upstream", "http://127.0.0.1:1"], "go together"),
            (["--upstream-ca", "/nonexistent/ca.pem"], "goes with --upstream"),
            (["--upstream", "http://127.0.0.1:1", "--upstream-token-file", "$EMPTY", "--postgres", "postgresql://u@h/d"], "a device is a SQLite store"),
            (["--listen", "127.0.0.1:1", "--tls-cert", "/nonexistent/cert.pem"], "go together"),
            (["--listen", "127.0.0.1:1", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], "there is no such file"),
        ])
    func prefsdRefusesABadDeviceCommandLine(arguments: [String], message: String) async throws {
        let (folder, empty) = try TCPListenerTests.folder(holdingToken: "")
        defer { try? FileManager.default.removeItem(at: folder) }
        let arguments = arguments.map { $0 == "$EMPTY" ? empty : $0 }
        // --db would be refused beside --postgres before --upstream is looked at.
        let database = arguments.contains("--postgres") ? [] : ["--db", folder.appending(path: "p.sqlite").path]
        let started = try await CommandResult.run(
            "prefsd", database + ["--socket", folder.appending(path: "s.sock").path] + arguments)
        #expect(started.status != 0, "\(arguments)")
        #expect(started.stderr.contains(message), "\(arguments): \(started.stderr)")
    }

    /// Over TLS: the upstream serves `--listen` with a certificate; a device given its CA syncs,
    /// and one that is not (the system's trust store does not know it) is refused, saying the
    /// certificate did not verify. Needs openssl to make the certificate (CI installs it, and
    /// fails rather than skips without it).
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
                || ProcessInfo.processInfo.environment["CI"] == "true"))
    func aDeviceSyncsOverTLSWithTheUpstreamsCA() async throws {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (cert, key) = (folder.appending(path: "cert.pem").path, folder.appending(path: "key.pem").path)
        let made = try await CommandResult.runTool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let (upstream, port) = try await Daemon.onFreePort { port in
            let (folder, tokenFile) = try TCPListenerTests.folder(holdingToken: "upstream-t0ken")
            return try await Daemon(
                arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile, "--tls-cert", cert, "--tls-key", key],
                folder: folder)
        }
        // The certificate names localhost only.
        let url = "https://localhost:\(port)"
        let trusting = try await Self.device(
            of: url, secret: try await Self.deviceToken("laptop", on: upstream), arguments: ["--upstream-ca", cert])
        #expect(try await trusting.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        try await Self.syncWait(trusting)
        #expect(try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope).stdout.hasPrefix("dark"))

        let doubting = try await Self.device(of: url, secret: try await Self.deviceToken("phone", on: upstream))
        let refused = try await doubting.prefsctl("sync", "--wait", "--timeout", "3")
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(refused.stderr.contains("certificate did not verify") && refused.stderr.contains(url), "\(refused.stderr)")

        // The right CA, but another host name than the certificate's: refused too.
        let elsewhere = "https://127.0.0.1:\(port)"
        let misnamed = try await Self.device(
            of: elsewhere, secret: try await Self.deviceToken("tablet", on: upstream), arguments: ["--upstream-ca", cert])
        let mismatch = try await misnamed.prefsctl("sync", "--wait", "--timeout", "3")
        #expect(mismatch.status == 69, "\(mismatch.stderr)")
        #expect(mismatch.stderr.contains(elsewhere), "\(mismatch.stderr)")
        #expect(try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope).stdout.hasPrefix("dark"))

        await trusting.expectCleanStop()
        await doubting.expectCleanStop()
        await misnamed.expectCleanStop()
        await upstream.expectCleanStop()
    }
}
