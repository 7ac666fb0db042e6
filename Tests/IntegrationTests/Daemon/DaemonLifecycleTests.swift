import Crypto
import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Starting, stopping, crashing and restarting the real daemon.
@Suite struct DaemonLifecycleTests {
    /// `--event-loops N` sets how many threads serve connections (three here, more than the default
    /// of one fewer than the cores on a two-core machine), and they serve connections at once, a
    /// watch among them. Fewer than one is a usage error.
    @Test func eventLoopsSetsTheThreadsThatServeConnections() async throws {
        let daemon = try await Daemon(arguments: ["--event-loops", "3"])
        let pid = try await daemon.client.status().pid
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        let loops = tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("NIO-SGLTN")
        }
        #expect(loops.count == 3, "\(tasks)")
        let watch = try RawSocket(path: daemon.socketPath)
        watch.send("GET /v1/watch?key=loops.n HTTP/1.1\r\nHost: prefsd\r\n\r\n")
        _ = await watch.read(until: ": watching")
        try await withThrowingTaskGroup(of: Void.self) { group in
            let client = daemon.client
            for index in 0..<16 { group.addTask { try await client.set("loops.n", to: .integer(Int64(index))) } }
            try await group.waitForAll()
        }
        let events = await watch.read(until: "\"revision\":16")
        #expect(events.contains("\"revision\":16"), "\(events)")

        let refused = try await CommandResult.run("prefsd", daemon.commandLine + ["--event-loops", "0"])
        #expect(refused.status == 64 || refused.status == 2, "\(refused.status)")
        #expect(refused.stderr.contains("--event-loops must be at least 1"), "\(refused.stderr)")
    }

    @Test func restartFindsEveryValueAgain() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.set("a.b", to: 1, scope: "/x")
        try await client.set("a.c", to: ["nested": [1, 2]])
        try await client.lock("a.b", scope: "/x")
        await daemon.expectCleanStop()
        try await daemon.start()
        #expect(try await client.resolve("a.b", scope: "/x/y").source == .lock("/x"))
        #expect(try await client.resolve("a.c").value == ["nested": [1, 2]])
        #expect(try await client.status().revision == 3)
    }

    @Test func itLogsOneLineWhenReadyAndOneWhenStopped() async throws {
        let daemon = try await Daemon(arguments: ["--log-level", "info"])
        await daemon.expectCleanStop()
        let log = try String(contentsOf: daemon.folder.appending(path: "prefsd.stderr"), encoding: .utf8)
        let lines = log.split(separator: "\n")
        #expect(lines.count == 2, "\(log)")
        #expect(lines.first?.contains("ready on \(daemon.socketPath): database \(daemon.databasePath)") == true, "\(log)")
        #expect(lines.last?.contains("prefsd stopped") == true, "\(log)")
    }

    @Test func acknowledgedWritesSurviveKill9() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        for index in 0..<50 { try await client.set("k.n\(index)", to: .integer(Int64(index))) }
        await daemon.kill()
        try await daemon.start()
        for index in 0..<50 { #expect(try await client.resolve("k.n\(index)").value == .integer(Int64(index))) }
        let check = try await CommandResult.runTool("/usr/bin/sqlite3", [daemon.databasePath, "PRAGMA integrity_check"])
        #expect(check.output == "ok")
    }

    @Test func theChangeLogsBoundsSurviveKill9AcrossACompaction() async throws {
        // 64 kept, compacted once 66 (64 + 64/32) are exceeded: at revision 67, back to 64.
        let daemon = try await Daemon(arguments: ["--retain-changes", "64"])
        let client = daemon.client
        for value in 1...68 { try await client.set("c.key", to: .integer(Int64(value))) }
        #expect(try await client.status().oldestRevision == 4)
        await daemon.kill()
        try await daemon.start()
        let status = try await client.status()
        #expect(status.revision == 68)
        #expect(status.oldestRevision == 4)
        let kept = try await collect(client.watch(WatchRequest(keys: ["c.key"], since: 3)), count: 65)
        #expect(kept.map(\.revision) == Array(4...68))
        #expect(try await daemon.raw("GET", "/v1/watch?key=c.key&since=2").code == "compacted")
        #expect(try await client.set("c.key", to: 69).revision == 69)
    }

    @Test func aSecondDaemonOnTheSameDatabaseIsRefused() async throws {
        let daemon = try await Daemon()
        let second = try await CommandResult.run(
            "prefsd", ["--db", daemon.databasePath, "--socket", daemon.folder.appending(path: "other.sock").path])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already in use"))
        #expect(second.stderr.contains("pid \(daemon.process!.processIdentifier)"))
    }

    @Test func aSecondDaemonOnTheSameSocketIsRefused() async throws {
        let daemon = try await Daemon()
        let second = try await CommandResult.run(
            "prefsd", ["--db", daemon.folder.appending(path: "other.sqlite").path, "--socket", daemon.socketPath])
        #expect(second.status == 1)
        #expect(second.stderr.contains("Another prefsd is already listening"))
        #expect(try await daemon.client.status().revision == 0)
    }

    @Test func aStaleSocketFileIsCleanedUp() async throws {
        let daemon = try await Daemon()
        await daemon.kill()
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        try await daemon.start()
        #expect(try await daemon.client.status().revision == 0)
    }

    @Test func socketAndFolderAreForTheUserOnly() async throws {
        let daemon = try await Daemon(folder: URL(fileURLWithPath: "/tmp/prefsd-perm-\(UUID().uuidString.prefix(8))/run"))
        defer { try? FileManager.default.removeItem(at: daemon.folder.deletingLastPathComponent()) }
        let socket = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        #expect((socket[.posixPermissions] as? Int) == 0o600)
        let database = try FileManager.default.attributesOfItem(atPath: daemon.databasePath)
        #expect(((database[.posixPermissions] as? Int) ?? 0) & 0o077 == 0)
    }

    @Test func notSQLiteFileIsRefusedAndLeftUntouched() async throws {
        let folder = URL(fileURLWithPath: "/tmp/prefsd-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appending(path: "prefs.sqlite")
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try garbage.write(to: database)
        let result = try await CommandResult.run("prefsd", ["--db", database.path, "--socket", folder.appending(path: "s.sock").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is not a SQLite database"))
        #expect(try Data(contentsOf: database) == garbage)
    }

    @Test func corruptDatabaseIsRefusedAndLeftUntouched() async throws {
        let daemon = try await Daemon()
        for index in 0..<300 { try await daemon.client.set("k.n\(index)", to: .string(String(repeating: "x", count: 200))) }
        await daemon.expectCleanStop()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: daemon.databasePath))
        // Keep the header, scribble over the b-tree pages.
        for index in 4096..<min(bytes.count, 4096 * 8) { bytes[index] = 0xA5 }
        try bytes.write(to: URL(fileURLWithPath: daemon.databasePath))
        let result = try await CommandResult.run("prefsd", daemon.commandLine)
        #expect(result.status == 1)
        #expect(result.stderr.contains("corrupt") || result.stderr.contains("malformed"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.databasePath)) == bytes)
    }

    @Test func databaseFromANewerPrefsdIsRefusedAndLeftUntouched() async throws {
        let daemon = try await Daemon()
        try await daemon.client.set("a.b", to: 1)
        await daemon.expectCleanStop()
        let insert = try await CommandResult.runTool(
            "/usr/bin/sqlite3", [daemon.databasePath, "INSERT INTO grdb_migrations (identifier) VALUES ('9999_future')"])
        #expect(insert.status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: daemon.databasePath))
        let result = try await CommandResult.run("prefsd", daemon.commandLine)
        #expect(result.status == 1)
        #expect(result.stderr.contains("newer prefsd"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.databasePath)) == before)
    }

    @Test func sigtermEndsWatchStreamsWithAFinalEventAndExits0() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.set("a.b", to: 1)
        var iterator = client.watch(WatchRequest(keys: ["a.b"], since: 0)).makeAsyncIterator()
        #expect(try await iterator.next()?.kind == .set)
        await daemon.expectCleanStop()
        // A progress event (every 15 s) may come first on a slow machine.
        var final = try await iterator.next()
        while final?.kind == .progress { final = try await iterator.next() }
        #expect(final?.kind == .shutdown)
        #expect(final?.revision == 1)
        #expect(try await iterator.next() == nil)
    }

    /// A client gone silent in the middle of an upload (its body promised, a part sent, then
    /// nothing) does not hold a graceful stop for ever: past the grace of 10 s the daemon ends
    /// the connection, keeps what came (the upload goes on from there), and exits 0.
    @Test func anUploadGoneSilentDoesNotHoldTheStop() async throws {
        let daemon = try await Daemon()
        let silent = try RawSocket(path: daemon.socketPath)
        let (length, sent) = (10_000_000, 3_000_000)
        silent.send(
            "PATCH /v1/blobs/\(String(repeating: "ab", count: 32)) HTTP/1.1\r\nHost: prefsd\r\nUpload-Offset: 0\r\n"
                + "Upload-Length: \(length)\r\nContent-Length: \(length)\r\n\r\n")
        silent.send(Data(repeating: 0x78, count: sent))
        await daemon.expectCleanStop()
        // The connection was ended under the silent client, and no answer claimed the upload done.
        #expect(!(await silent.readToEnd()).contains("204"))
    }

    /// An upload answered before its body has all come (its blob is held already) whose client
    /// then stops sending, body unfinished, is closed by the daemon at once — the connection does
    /// not linger half-closed — and does not hold a graceful stop.
    @Test func anUploadAnsweredBeforeItsBodyEndsClosesWhenItsClientStops() async throws {
        let daemon = try await Daemon()
        let bytes = Data("held already".utf8)
        let sha256 = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let whole = try RawSocket(path: daemon.socketPath)
        whole.send(Self.blobPatch(sha256, length: bytes.count))
        whole.send(bytes)
        #expect(await whole.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 204"))

        let early = try RawSocket(path: daemon.socketPath)
        early.send(Self.blobPatch(sha256, length: 10_000_000))
        #expect(await early.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 204"), "answered before the body is read")
        early.send(Data(repeating: 0x78, count: 1_000_000))
        early.shutdownSending()
        var received = await early.receive()
        while case .data = received { received = await early.receive() }
        #expect(received == .closed, "the daemon closes its side once the client has stopped sending")
        await daemon.expectCleanStop()
    }

    /// The head of a `PATCH` sending the blob `sha256` whole: `length` bytes from offset 0.
    private static func blobPatch(_ sha256: String, length: Int) -> String {
        "PATCH /v1/blobs/\(sha256) HTTP/1.1\r\nHost: prefsd\r\nUpload-Offset: 0\r\nUpload-Length: \(length)\r\n"
            + "Content-Length: \(length)\r\n\r\n"
    }
}
