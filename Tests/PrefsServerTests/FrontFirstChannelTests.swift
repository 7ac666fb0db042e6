#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Hummingbird
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

/// A connection answered at the front holds no task (``FrontFirstChannel``), unlike one in
/// Hummingbird's request loop, which a stopping server waits for or, cancelled, ends. The server
/// does the same for those (``FrontFirstConnections``): stopped gracefully, it returns once each
/// has finished; cancelled, it closes the client's side of each, which the front handler takes
/// for the end of an idle connection, and ends the request loops of those that stepped aside.
@Suite struct FrontFirstChannelTests {
    @Test(.timeLimit(.minutes(1))) func aCancelledServerClosesItsConnections() async throws {
        try await Self.withServer { store, server, socketPath, ready in
            let returned = Atomic<Bool>(false)
            let running = Task {
                defer { returned.store(true, ordering: .releasing) }
                try await server.application.run()
            }
            for await _ in ready { break }

            // Connections answered at the front — a read, a watch — and one whose front handler
            // stepped aside (an HTTP/1.0 request): Hummingbird's request loop answers it, and
            // waits for the next.
            var connections: [Int32] = []
            defer { connections.forEach { close($0) } }
            for request in [
                "GET /v1/prefs/a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n", "GET /v1/watch?key=a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n",
                "GET /v1/prefs/a.b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            ] {
                let connection = try UnixSocket.descriptor(connectedTo: socketPath)
                connections.append(connection)
                let bytes = Array(request.utf8)
                #expect(send(connection, bytes, bytes.count, 0) == bytes.count)
                var buffer = [UInt8](repeating: 0, count: 4096)
                let answer = UnixSocket.receive(connection, into: &buffer, count: buffer.count)
                #expect(answer > 0 && String(decoding: buffer[..<max(answer, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
            }

            // Cancelled, the server returns, every connection closed: what is left to read ends.
            running.cancel()
            try await waitUntil("the cancelled server returns", timeout: .seconds(20)) { returned.load(ordering: .acquiring) }
            for connection in connections {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                    try #require(poll(&readable, 1, 0) == 1)
                    let count = recv(connection, &buffer, buffer.count, 0)
                    try #require(count >= 0)
                    if count == 0 { break }
                }
            }
        }
    }

    /// Hummingbird's server returns as soon as it stops accepting, its tasks for these connections
    /// long ended: the application does not, and leaves the connections answered at the front
    /// open until they finish — a watch until the engine ends it, with its last event.
    @Test(.timeLimit(.minutes(1))) func aGracefullyStoppedServerLetsItsConnectionsFinish() async throws {
        try await Self.withServer { store, server, socketPath, ready in
            let group = ServiceGroup(configuration: .init(services: [server.application], logger: Logger(label: "test")))
            let returned = Atomic<Bool>(false)
            let running = Task {
                defer { returned.store(true, ordering: .releasing) }
                try await group.run()
            }
            defer { running.cancel() }
            for await _ in ready { break }

            let watch = try UnixSocket.descriptor(connectedTo: socketPath)
            defer { close(watch) }
            let request = Array("GET /v1/watch?key=a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n".utf8)
            #expect(send(watch, request, request.count, 0) == request.count)
            var received = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !received.contains(": watching") {
                let count = UnixSocket.receive(watch, into: &buffer, count: buffer.count)
                try #require(count > 0)
                received += String(decoding: buffer[..<count], as: UTF8.self)
            }

            await group.triggerGracefulShutdown()
            try await waitUntil("the server stops accepting", timeout: .seconds(20)) { !UnixSocket.isAnswering(socketPath) }
            let returnedEarly = returned.load(ordering: .acquiring)
            #expect(!returnedEarly)
            store.endWatches()
            while true {
                let count = UnixSocket.receive(watch, into: &buffer, count: buffer.count)
                try #require(count >= 0)
                if count == 0 { break }
                received += String(decoding: buffer[..<count], as: UTF8.self)
            }
            #expect(received.contains("event: shutdown"))
            try await waitUntil("the server returns", timeout: .seconds(20)) { returned.load(ordering: .acquiring) }
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
}
