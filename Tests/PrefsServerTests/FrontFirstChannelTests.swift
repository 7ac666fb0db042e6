#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Hummingbird
import Logging
import PrefsKit
import PrefsSocket
import PrefsStore
import Synchronization
import TestHarness
import Testing

@testable import PrefsServer

/// A connection answered at the front has a task that waits for the front handler to step aside
/// (``FrontFirstChannel``) rather than one in Hummingbird's request loop, which a cancelled server
/// ends: it ends the waiting ones too, closing the client's side, which the front handler takes
/// for the end of an idle connection.
@Suite struct FrontFirstChannelTests {
    @Test(.timeLimit(.minutes(1))) func aCancelledServerEndsTheConnectionsWaitingAtTheFront() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let folder = "/tmp/prefsd-front-\(UUID().uuidString.prefix(8))"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socketPath = folder + "/s.sock"
            let (ready, announceReady) = AsyncStream<Void>.makeStream()
            let server = try PrefsHTTPServer(
                engine: store, socketPath: socketPath, logger: Logger(label: "test"), onReady: { announceReady.yield() })
            let returned = Atomic<Bool>(false)
            let running = Task {
                defer { returned.store(true, ordering: .releasing) }
                try await server.application.run()
            }
            for await _ in ready { break }

            // A connection answered at the front: its task now waits for the front handler.
            let connection = try UnixSocket.descriptor(connectedTo: socketPath)
            defer { close(connection) }
            let request = Array("GET /v1/prefs/a.b HTTP/1.1\r\nHost: prefsd\r\n\r\n".utf8)
            #expect(send(connection, request, request.count, 0) == request.count)
            var buffer = [UInt8](repeating: 0, count: 4096)
            let answer = UnixSocket.receive(connection, into: &buffer, count: buffer.count)
            #expect(answer > 0 && String(decoding: buffer[..<max(answer, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))

            // Cancelled, the server returns — it would wait on that task for as long as the
            // client keeps the connection open — and the connection is closed.
            running.cancel()
            try await waitUntil("the cancelled server returns", timeout: .seconds(20)) { returned.load(ordering: .acquiring) }
            var closed = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            #expect(poll(&closed, 1, 0) == 1)
            #expect(recv(connection, &buffer, buffer.count, 0) == 0)
        }
    }
}
