#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsClientCore
import PrefsKit
import PrefsSocket
import TestHarness
import Testing

/// `prefsd --listen`: the API on loopback TCP, for bearers of a token only (the file token here;
/// named tokens: ``TokenAccessTests``).
@Suite struct TCPListenerTests {
    /// One request over TCP; the whole answer (the connection is closed after it).
    static func request(_ port: UInt16, _ target: String, authorization: String?) async throws -> String {
        let socket = try RawSocket(tcpPort: port)
        socket.send(
            "GET \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n")
        return await socket.readToEnd()
    }

    /// A daemon that also listens on a free loopback port (``Daemon/onFreePort(_:)``), with
    /// `token` (as its file holds it); on its own SQLite file, or on the PostgreSQL database at
    /// `postgresURL`; with more `arguments`. Its socket answers only once its TCP listener is
    /// bound, so the port is this daemon's when it returns.
    static func daemon(token: String, postgresURL: String? = nil, arguments: [String] = []) async throws -> (daemon: Daemon, port: UInt16) {
        try await Daemon.onFreePort { port in
            let (folder, tokenFile) = try folder(holdingToken: token)
            return try await Daemon(
                arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile] + arguments, folder: folder, postgresURL: postgresURL)
        }
    }

    /// A new folder under /tmp with a file `token` that holds `token`, readable by its owner only.
    static func folder(holdingToken token: String) throws -> (folder: URL, tokenFile: String) {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-tcp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tokenFile = folder.appending(path: "token").path
        try token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        return (folder, tokenFile)
    }

    @Test func onlyTheTokenGetsIn() async throws {
        let (daemon, port) = try await Self.daemon(token: "  s3cret-t0ken\n")
        try await daemon.client.set("secret.key", to: "v")
        var answer = ""
        try await waitUntil("the TCP listener answers") {  // it may start a moment after the socket
            answer = (try? await Self.request(port, "/v1/prefs/secret.key", authorization: "Bearer s3cret-t0ken")) ?? ""
            return !answer.isEmpty
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(answer.contains(#""value":"v""#))
        for refused in [nil, "Bearer s3cret-t0ke", "Bearer s3cret-t0ken2", "Bearer S3CRET-T0KEN", "Basic czNjcmV0"] {
            let answer = try await Self.request(port, "/v1/prefs/secret.key", authorization: refused)
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(refused ?? "no header")")
            #expect(answer.contains(#"{"error":{"code":"unauthorized","message":"This listener needs a token"#))
            if let refused { #expect(!answer.contains(refused.dropFirst(7)), "the answer never repeats what was sent") }
            #expect(!answer.contains(#""value""#))
        }
    }

    /// A port another program listens on stops the daemon at start, saying so and what to do,
    /// before its socket answers anyone or it says it is ready.
    @Test func aTakenPortIsRefusedAtStart() async throws {
        let (first, port) = try await Self.daemon(token: "t0ken")
        let (folder, tokenFile) = try Self.folder(holdingToken: "t0ken")
        defer { try? FileManager.default.removeItem(at: folder) }
        let socket = folder.appending(path: "s.sock").path
        // Bounded, in case it kept running: the test then fails rather than waits.
        let second = try await CommandResult.runTool(
            "/usr/bin/timeout",
            ["20", CommandResult.binaries.appending(path: "prefsd").path, "--db", folder.appending(path: "p.sqlite").path,
             "--socket", socket, "--listen", "127.0.0.1:\(port)", "--token-file", tokenFile])
        #expect(second.status == 1)
        #expect(second.stderr.contains("Cannot listen on 127.0.0.1:\(port): the address is already in use"), "\(second.stderr)")
        #expect(second.stderr.contains("give --listen another port"))
        #expect(!second.stderr.contains("ready on"))
        #expect(!FileManager.default.fileExists(atPath: socket), "its socket never listened")
        #expect(try await first.client.status().revision == 0, "the first daemon serves on")
        await first.stop()
    }

    @Test func unsafeSetupsAreRefusedAtStart() async throws {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-tcp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokenFile = folder.appending(path: "token").path
        try "t0ken".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let prefsd = CommandResult.binaries.appending(path: "prefsd").path
        func start(_ listen: String, _ extra: [String] = []) async throws -> CommandResult {
            try await CommandResult.runTool(
                prefsd,
                ["--db", folder.appending(path: "p.sqlite").path, "--socket", folder.appending(path: "s.sock").path,
                 "--listen", listen, "--token-file", tokenFile] + extra)
        }
        chmod(tokenFile, 0o644)
        let readable = try await start("127.0.0.1:\(LoopbackTCP.freePort())")
        #expect(readable.status == 1)
        #expect(readable.stderr.contains("chmod 600"))
        chmod(tokenFile, 0o600)
        let exposed = try await start("0.0.0.0:\(LoopbackTCP.freePort())")
        #expect(exposed.status == 1)
        #expect(exposed.stderr.contains("not a loopback address"))
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "p.sqlite").path))
        let noListener = try await CommandResult.runTool(prefsd, ["--token-file", tokenFile])
        #expect(noListener.status != 0)
        #expect(noListener.stderr.contains("--token-file goes with --listen"))
    }
}
