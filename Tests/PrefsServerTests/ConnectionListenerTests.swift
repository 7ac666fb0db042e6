#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Logging
import PrefsEngine
import PrefsKit
import PrefsSocket
import PrefsStore
import ServiceLifecycle
import Synchronization
import TestHarness
import Testing

@testable import PrefsServer

/// A connection holds no task, whichever path answers it: the listener (``ConnectionListener``,
/// ``ListenerConnections``) keeps track of each instead. Stopped gracefully, it returns once each
/// has finished; cancelled, it closes the client's side of each, which ends an idle connection on
/// either path.
@Suite struct ConnectionListenerTests {
    @Test(.timeLimit(.minutes(5))) func aCancelledServerClosesItsConnections() async throws {
        try await Self.withServer { store, server, socketPath, ready in
            let running = Running { try await server.application.run() }
            for await _ in ready { break }

            // Connections answered at the front — a read, a watch — and one whose front handler
            // stepped aside (an HTTP/1.0 request): the general path answers it, and waits for the
            // next.
            var connections: [Int32] = []
            defer { connections.forEach { close($0) } }
            for request in [
                "GET /v1/prefs/a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n", "GET /v1/watch?key=a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n",
                "GET /v1/prefs/a.b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            ] {
                let (connection, answer) = try Self.send(request, to: socketPath)
                connections.append(connection)
                #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
            }

            // Cancelled, the server returns, every connection closed: what is left to read ends.
            running.task.cancel()
            try await waitUntil("the cancelled server returns", timeout: .seconds(20)) { running.returned }
            for connection in connections { _ = try Self.readToEnd(connection, waiting: false) }
        }
    }

    /// A listener stopped gracefully stops accepting at once, and returns only once its
    /// connections have finished — a watch once the engine ends it, with its last event.
    @Test(.timeLimit(.minutes(5))) func aGracefullyStoppedServerLetsItsConnectionsFinish() async throws {
        try await Self.withServer { store, server, socketPath, ready in
            let group = ServiceGroup(configuration: .init(services: [server.application], logger: Logger(label: "test")))
            let running = Running { try await group.run() }
            defer { running.task.cancel() }
            for await _ in ready { break }
            let (watch, _) = try Self.send("GET /v1/watch?key=a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n", to: socketPath, until: ": watching")
            defer { close(watch) }

            await group.triggerGracefulShutdown()
            try await waitUntil("the server stops accepting", timeout: .seconds(20)) { !UnixSocket.isAnswering(socketPath) }
            let returnedEarly = running.returned
            #expect(!returnedEarly)
            store.endWatches()
            #expect(try Self.readToEnd(watch, waiting: true).contains("event: shutdown"))
            try await waitUntil("the server returns", timeout: .seconds(20)) { running.returned }
        }
    }

    /// A server's run in a task, and whether it has returned.
    private struct Running: Sendable {
        let task: Task<Void, any Error>
        private let flag = Flag()

        init(_ run: @escaping @Sendable () async throws -> Void) {
            task = Task { [flag] in
                defer { flag.set() }
                try await run()
            }
        }

        /// Whether the run has returned.
        var returned: Bool { flag.isSet }

        private final class Flag: Sendable {
            private let value = Atomic<Bool>(false)
            var isSet: Bool { value.load(ordering: .acquiring) }
            func set() { value.store(true, ordering: .releasing) }
        }
    }

    /// Runs `body` with a store, a server of it on a socket in a folder of its own (removed after),
    /// and a stream that yields once the server is ready.
    private static func withServer(
        _ body: (_ store: EmbeddedStore, _ server: PrefsHTTPServer, _ socketPath: String, _ ready: AsyncStream<Void>) async throws -> Void
    ) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let folder = "/tmp/prefsd-front-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socketPath = folder + "/s.sock"
            let (ready, announceReady) = AsyncStream<Void>.makeStream()
            let server = try PrefsHTTPServer(
                engine: store, socketPath: socketPath, logger: Logger(label: "test"), onReady: { announceReady.yield() })
            try await body(store, server, socketPath, ready)
        }
    }

    /// Sends `request` on a new connection to `socketPath`, and returns the connection and what it
    /// received: its first read, or until it has received `until`.
    private static func send(_ request: String, to socketPath: String, until: String? = nil) throws -> (Int32, String) {
        let connection = try UnixSocket.descriptor(connectedTo: socketPath)
        let bytes = Array(request.utf8)
        #expect(Glibc.send(connection, bytes, bytes.count, 0) == bytes.count)
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        repeat {
            let count = UnixSocket.receive(connection, into: &buffer, count: buffer.count)
            try #require(count > 0)
            received += String(decoding: buffer[..<count], as: UTF8.self)
        } while until.map { !received.contains($0) } ?? false
        return (connection, received)
    }

    /// What is left to read on `connection` until it ends; `waiting` for it (at most 20 s), or
    /// requiring it to be there already (the server has returned).
    private static func readToEnd(_ connection: Int32, waiting: Bool) throws -> String {
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            try #require(poll(&readable, 1, waiting ? 20_000 : 0) == 1)
            let count = recv(connection, &buffer, buffer.count, 0)
            try #require(count >= 0)
            if count == 0 { return received }
            received += String(decoding: buffer[..<count], as: UTF8.self)
        }
    }
}
