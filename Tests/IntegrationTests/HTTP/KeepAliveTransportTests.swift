#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// The client's transport: keep-alive connections, no thread held while waiting, requests and
/// watches that end when their task is cancelled.
@Suite(.timeLimit(.minutes(5))) struct KeepAliveTransportTests {
    @Test func sequentialRequestsReuseOneConnection() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        _ = try await client.status()
        let sockets = try daemon.openSockets()
        for index in 0..<20 { try await client.set("reuse.k\(index)", to: .integer(Int64(index))) }
        _ = try await client.list(scope: .root, prefix: "reuse.")
        // No socket opened since: the same connection carried them all. (One may have closed
        // meanwhile: the connection the harness waited for the daemon's start on.)
        #expect(try daemon.openSockets().isSubset(of: sockets))
    }

    @Test func aClientReachesARestartedDaemonAgain() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.set("restart.key", to: 1)
        await daemon.expectCleanStop()
        // Its kept-alive connection is closed: the request fails as unreachable, not as a hang.
        await #expect(throws: PrefsError.self) { try await client.status() }
        try await daemon.start()
        #expect(try await client.resolve("restart.key").value == 1)
    }

    @Test func aBurstOfRequestsTakesTurnsOnABoundedNumberOfConnections() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let before = try daemon.openSockets().count
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { try await client.set("burst.k\(index)", to: .integer(Int64(index))) }
            }
            try await group.waitForAll()
        }
        #expect(try await client.list(scope: .root, prefix: "burst.").count == 200)
        // At most 32 were open at once, and 8 are kept: the daemon sees the rest close.
        try await waitUntil("at most 8 connections open") { try daemon.openSockets().count - before <= 8 }
        #expect(try daemon.openSockets().count - before <= 8)
    }

    @Test func requestsToASilentDaemonHoldNoThreadAndEndWhenCancelled() async throws {
        let silent = try SilentListener()
        let transport = UnixSocketTransport(socketPath: silent.path)
        let requests = (0..<8).map { _ in
            Task { try await transport.send(HTTPRequestSpec(method: "GET", target: "/v1/status")) }
        }
        // Eight requests wait, yet the concurrency pool (two threads here) still runs tasks.
        #expect(await Task.detached { 42 }.value == 42)
        for request in requests { request.cancel() }
        for request in requests {
            await #expect(throws: CancellationError.self) { try await request.value }
        }

        // The request went out: it is unanswered, for want of progress.
        let impatient = UnixSocketTransport(socketPath: silent.path, timeout: .milliseconds(200))
        let unanswered = await #expect(throws: UnansweredRequest.self) {
            try await impatient.send(HTTPRequestSpec(method: "GET", target: "/v1/status"))
        }
        let error = unanswered?.cause
        #expect(error?.code == .unreachable && error?.message.contains("did not answer") == true)
    }

    @Test func aWatchWhoseTaskIsCancelledEndsItsConnection() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let watching = Task {
            for try await _ in client.watch(WatchRequest(keys: ["quiet.key"])) {}
        }
        try await waitUntil("one watcher") { try await client.status().counts.watchers == 1 }
        watching.cancel()
        try await waitUntil("no watchers") { try await client.status().counts.watchers == 0 }
        #expect(try await client.status().counts.watchers == 0)
    }
}

extension Daemon {
    /// The sockets the daemon has open (its listener and one per connection), by inode.
    func openSockets() throws -> Set<String> {
        let pid = try #require(process?.processIdentifier)
        let folder = "/proc/\(pid)/fd"
        let links = try FileManager.default.contentsOfDirectory(atPath: folder).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }
        return Set(links.filter { $0.hasPrefix("socket:") })
    }
}

/// A Unix socket that accepts connections into its queue but never answers: a hung daemon.
final class SilentListener: Sendable {
    let path = "/tmp/prefsd-silent-\(UUID().uuidString.prefix(8)).sock"
    private let descriptor: Int32

    init() throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8)
            buffer[path.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}
