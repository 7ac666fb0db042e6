import Foundation
import PrefsClient
import PrefsKit
import Synchronization
import TestHarness
import Testing

/// A client passes the newest revision it wrote as `minRevision` on its reads, so a program
/// reads its own writes whichever host answers; a daemon on one database answers them at once.
@Suite struct ClientMinRevisionTests {
    /// A transport that records each request's target, then sends it on.
    final class Recording: HTTPTransport {
        let next: any HTTPTransport
        private let targets = Mutex<[String]>([])
        var sent: [String] { targets.withLock { $0 } }

        init(_ next: any HTTPTransport) { self.next = next }

        func send(_ request: HTTPRequestSpec) async throws -> HTTPResponseData {
            targets.withLock { $0.append("\(request.method) \(request.target)") }
            return try await next.send(request)
        }

        func send(_ request: HTTPRequestSpec, body: AsyncThrowingStream<Data, any Error>, length: Int64?) async throws
            -> HTTPResponseData
        {
            targets.withLock { $0.append("\(request.method) \(request.target)") }
            return try await next.send(request, body: body, length: length)
        }

        func stream(_ request: HTTPRequestSpec) async throws -> HTTPStreamingResponse {
            targets.withLock { $0.append("\(request.method) \(request.target)") }
            return try await next.stream(request)
        }
    }

    @Test func readsAfterAWriteCarryItsRevision() async throws {
        let daemon = try await Daemon()
        let recording = Recording(UnixSocketTransport(socketPath: daemon.socketPath))
        let client = PrefsClient(transport: recording)
        _ = try await client.resolve("a.b", scope: "/")
        let written = try await client.set("a.b", to: 7, scope: "/accounts/x")
        #expect(try await client.resolve("a.b", scope: "/accounts/x").value == 7)
        _ = try await client.list(scope: "/", prefix: nil)
        try await client.waitForRevision(written.revision)
        #expect(
            recording.sent == [
                "GET /v1/prefs/a.b?scope=/", "PUT /v1/prefs/a.b?scope=/accounts/x",
                "GET /v1/prefs/a.b?scope=/accounts/x&minRevision=\(written.revision)",
                "GET /v1/prefs?scope=/&minRevision=\(written.revision)", "GET /v1/status?minRevision=\(written.revision)",
            ])
    }
}
