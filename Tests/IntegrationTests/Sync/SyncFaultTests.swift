import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Sync through faults, all real processes: device daemons reach their upstream through fault
/// proxies that partition them and cut answers in the middle; a device is killed as its push is
/// answered; a device's token is revoked; and the upstream is two hosts on PostgreSQL.
@Suite("Sync through faults", .timeLimit(.minutes(5)))
struct SyncFaultTests {
    static let scope = SyncTests.scope

    /// `prefsctl dump --scope` of the devices' scope on `daemon`, as JSON text.
    static func dump(_ daemon: Daemon) async throws -> PrefsDump {
        let dumped = try await daemon.prefsctl("dump", "--scope", scope)
        #expect(dumped.status == 0, "\(dumped.stderr)")
        return try JSONDecoder().decode(PrefsDump.self, from: Data(dumped.stdout.utf8))
    }

    /// Syncs every device twice round, so that each has what the others pushed.
    static func syncAll(_ devices: [Daemon]) async throws {
        for _ in 0..<2 {
            for device in devices { try await SyncTests.syncWait(device) }
        }
    }

    @Test("three devices behind fault proxies — partitions, answers cut mid-way — end with equal dumps and the conflict listed")
    func devicesConvergeThroughFaults() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        var proxies: [FaultProxy] = []
        var devices: [Daemon] = []
        for name in ["laptop", "desktop", "phone"] {
            let proxy = try FaultProxy(to: port)
            proxies.append(proxy)
            devices.append(
                try await SyncTests.device(
                    of: "http://127.0.0.1:\(proxy.port)", secret: try await SyncTests.deviceToken(name, on: upstream)))
        }
        defer { for proxy in proxies { proxy.close() } }
        #expect(try await upstream.prefsctl("set", "ui.theme", #""plain""#, "--scope", Self.scope).status == 0)
        try await Self.syncAll(devices)

        // The laptop and the desktop are cut off and write the same key; every device writes a
        // key of its own; the phone's answers are cut in the middle.
        proxies[0].partition()
        proxies[1].partition()
        #expect(try await devices[0].prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        #expect(try await devices[1].prefsctl("set", "ui.theme", #""light""#, "--scope", Self.scope).status == 0)
        for (index, device) in devices.enumerated() {
            let set = try await device.prefsctl("set", "own.\(index)", "\(index)", "--scope", "\(Self.scope)/threads/\(index)")
            #expect(set.status == 0, "\(set.stderr)")
        }
        // Ten bytes: inside an answer's head, or a deflated frame of the device's sync stream.
        proxies[2].cutNextAnswer(after: 10)
        #expect(try await devices[2].prefsctl("set", "ui.density", #""compact""#, "--scope", Self.scope).status == 0)
        #expect(try await upstream.prefsctl("set", "ui.font", "13", "--scope", Self.scope).status == 0)
        let cutOff = try await devices[0].prefsctl("sync", "--wait", "--timeout", "1")
        #expect(cutOff.status == 69, "\(cutOff.stderr)")

        proxies[0].heal()
        proxies[1].heal()
        try await Self.syncAll(devices)

        let expected = try await Self.dump(upstream)
        #expect(expected.values.count == 6, "\(expected.values)")
        for device in devices {
            #expect(try await Self.dump(device) == expected)
        }
        let listed = try await upstream.prefsctl("conflicts", "--json")
        let conflicts = try WireJSON.decode(ConflictList.self, from: Data(listed.stdout.utf8)).conflicts
        #expect(conflicts.map(\.key) == ["ui.theme"], "\(listed.stdout)")
        // Each change of a device was taken in once: one change of the phone's key in the log.
        let log = try await upstream.prefsctl("log", "--prefix", "ui.density", "--jsonl")
        #expect(log.stdout.split(separator: "\n").count == 1, "\(log.stdout)")

        for device in devices { await device.expectCleanStop() }
        await upstream.expectCleanStop()
    }

    @Test("a device whose upstream has no sync stream exchanges by one request each, and syncs all the same")
    func aDeviceWithoutStreamsSyncsByRequests() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let proxy = try FaultProxy(to: port)
        defer { proxy.close() }
        proxy.refuseStreams()
        let device = try await SyncTests.device(
            of: "http://127.0.0.1:\(proxy.port)", secret: try await SyncTests.deviceToken("laptop", on: upstream))
        #expect(try await device.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        #expect(try await upstream.prefsctl("set", "ui.font", "13", "--scope", Self.scope).status == 0)
        try await SyncTests.syncWait(device)
        #expect(try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope).stdout.hasPrefix("dark"))
        #expect(try await device.prefsctl("get", "ui.font", "--scope", Self.scope).stdout.hasPrefix("13"))
        let metrics = try await upstream.raw("GET", "/v1/metrics").body
        #expect(metrics.contains(#"prefsd_requests_total{endpoint="POST /v1/sync",status="200"}"#), "\(metrics)")
        #expect(!metrics.contains(#"endpoint="POST /v1/sync:stream""#), "the proxy answered the stream: \(metrics)")

        await device.expectCleanStop()
        await upstream.expectCleanStop()
    }

    @Test("a sync stream whose device stops sending mid-body, or ends its body under a long poll, ends then and closes; the upstream stops cleanly")
    func aStreamEndsWithItsBody() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let secret = try await SyncTests.deviceToken("laptop", on: upstream)
        for endsBody in [false, true] {
            let socket = try RawSocket(tcpPort: port)
            // A snapshot, then a long poll of 30 s: longer than two of the socket's 10 s reads.
            let frames = #"{"id":1,"request":{"cursor":0}}"# + "\n" + #"{"id":2,"request":{"cursor":1,"wait":30000}}"# + "\n"
            socket.send(
                "POST /v1/sync:stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(secret)\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + String(frames.utf8.count, radix: 16) + "\r\n" + frames + "\r\n")
            let opened = await socket.read(until: #""id":1"#)
            #expect(opened.hasPrefix("HTTP/1.1 200 OK"), "\(opened)")
            if endsBody { socket.send("0\r\n\r\n") }
            socket.shutdownSending()
            let rest = await socket.readToEnd()
            // Closed by the upstream, not silent until the long poll's end.
            #expect(await socket.receive() == .closed, "\(endsBody): \(rest)")
            #expect(rest.hasSuffix("0\r\n\r\n"), "the answer ends whole: \(rest)")
            #expect(!rest.contains(#""id":2"#), "the long poll ends unanswered: \(rest)")
            if !endsBody { #expect(rest.contains(#""code":"invalid_request""#), "a body cut short says so: \(rest)") }
        }
        await upstream.expectCleanStop()
    }

    @Test("a device killed as its push is answered pushes again when it restarts, and the change is applied once")
    func aDeviceKilledMidPushAppliesOnce() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let (folder, tokenFile) = try TCPListenerTests.folder(holdingToken: try await SyncTests.deviceToken("laptop", on: upstream))
        let device = try await Daemon(
            arguments: ["--upstream", "http://127.0.0.1:\(port)", "--upstream-token-file", tokenFile], folder: folder,
            environment: ["PREFSD_DEBUG_EXIT_AFTER_PUSHES": "1"])
        #expect(try await device.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        // The upstream applies the push; the device ends (137) before it takes the answer in.
        #expect(await device.exited() == 137)
        #expect(try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope).stdout.hasPrefix("dark"))

        device.environment["PREFSD_DEBUG_EXIT_AFTER_PUSHES"] = nil
        try await device.start()
        try await SyncTests.syncWait(device)
        #expect(try await SyncTests.status(device).outbox == 0)
        // It was pushed again, and answered as a duplicate.
        let metrics = try await upstream.client.metricsText()
        #expect(metrics.contains(#"prefsd_sync_mutations_total{outcome="duplicate"} 1"#), "\(metrics)")
        let log = try await upstream.prefsctl("log", "--prefix", "ui.theme", "--jsonl")
        #expect(log.stdout.split(separator: "\n").count == 1, "applied once: \(log.stdout)")

        await device.expectCleanStop()
        await upstream.expectCleanStop()
    }

    @Test("a device whose token is revoked stops syncing at once; its local writes wait in its outbox")
    func aRevokedDeviceStops() async throws {
        let (upstream, port) = try await SyncTests.upstream()
        let device = try await SyncTests.device(
            of: "http://127.0.0.1:\(port)", secret: try await SyncTests.deviceToken("laptop", on: upstream))
        try await SyncTests.syncWait(device)
        #expect(try await upstream.prefsctl("token", "revoke", "laptop").status == 0)
        #expect(try await device.prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        let refused = try await device.prefsctl("sync", "--wait", "--timeout", "2")
        #expect(refused.status == 69, "\(refused.stderr)")
        #expect(refused.stderr.contains("unauthorized"), "\(refused.stderr)")
        #expect(try await SyncTests.status(device).outbox == 1)
        let read = try await upstream.prefsctl("get", "ui.theme", "--scope", Self.scope)
        #expect(read.status == 3, "nothing reached the upstream: \(read.stdout)")

        await device.expectCleanStop()
        await upstream.expectCleanStop()
    }

    @Test(
        "devices of an upstream that is two hosts on PostgreSQL converge, whichever host each talks to",
        .enabled(if: PostgresTestDatabase.isEnabled))
    func devicesOfTwoPostgresHostsConverge() async throws {
        try await withPostgresDatabase { database in try await Self.devicesConverge(on: database) }
    }

    static func devicesConverge(on database: PostgresTestDatabase) async throws {
        let hosts = [
            try await TCPListenerTests.daemon(token: "upstream-t0ken", postgresURL: database.url),
            try await TCPListenerTests.daemon(token: "upstream-t0ken", postgresURL: database.url),
        ]
        var devices: [Daemon] = []
        var proxies: [FaultProxy] = []
        defer { for proxy in proxies { proxy.close() } }
        for (index, name) in ["laptop", "phone"].enumerated() {
            let secret = try await SyncTests.deviceToken(name, on: hosts[0].daemon)
            let proxy = try FaultProxy(to: hosts[index].port)
            proxies.append(proxy)
            devices.append(try await SyncTests.device(of: "http://127.0.0.1:\(proxy.port)", secret: secret))
        }
        try await Self.syncAll(devices)
        // Both offline, each writes the same key; then each comes back to its own host.
        for proxy in proxies { proxy.partition() }
        #expect(try await devices[0].prefsctl("set", "ui.theme", #""dark""#, "--scope", Self.scope).status == 0)
        #expect(try await devices[1].prefsctl("set", "ui.theme", #""light""#, "--scope", Self.scope).status == 0)
        #expect(try await devices[1].prefsctl("set", "ui.font", "14", "--scope", Self.scope).status == 0)
        for proxy in proxies { proxy.heal() }
        try await Self.syncAll(devices)
        let expected = try await Self.dump(hosts[0].daemon)
        #expect(try await Self.dump(hosts[1].daemon) == expected)
        for device in devices { #expect(try await Self.dump(device) == expected) }
        let listed = try await hosts[1].daemon.prefsctl("conflicts", "--json")
        let conflicts = try WireJSON.decode(ConflictList.self, from: Data(listed.stdout.utf8)).conflicts
        #expect(conflicts.count == 1, "\(listed.stdout) \(listed.stderr)")

        for device in devices { await device.expectCleanStop() }
        for host in hosts { await host.daemon.expectCleanStop() }
    }
}
