import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``DecodedAnswerHandler``, the general HTTP/1 path, on a connection without a socket: NIO's
/// encoder and decoder, the HTTP/1 rules and the handler, as the server puts them behind the fast
/// path. Answers in order, bodies over their limit, and when the connection closes.
@Suite struct DecodedAnswerTests {
    /// The general path over `store`, as ``ConnectionSetupHandler`` puts it behind the fast path.
    static func channel(over store: EmbeddedStore, limits: ServerLimits = ServerLimits()) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            HTTPResponseEncoder(), ByteToMessageHandler(HTTPRequestDecoder()), HTTP1ConnectionHandler(), QuiesceGraceHandler(),
            DecodedAnswerHandler(api: Serving(store, limits: limits).api),
        ])
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/unused")).wait()
        return channel
    }

    /// The status lines in `written`, in order.
    static func statusLines(_ written: String) -> [Substring] {
        written.matches(of: /HTTP\/1\.1 \d{3} [^\r]*/).map(\.output)
    }

    /// A read answered at once (a status would be answered by a task, off the embedded loop).
    static let read = "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"

    @Test func answersPipelinedRequestsInOrder() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.set("a.one", to: 1, scope: "/")
            let channel = try Self.channel(over: store)
            try channel.writeInbound(
                ByteBuffer(string: "GET /v1/prefs/a.one HTTP/1.1\r\n\r\nGET /v1/nowhere HTTP/1.1\r\n\r\nGET /v1/prefs/a.one HTTP/1.1\r\n\r\n"))
            let written = try FrontReadTests.written(by: channel)
            #expect(Self.statusLines(written) == ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK"])
            #expect(written.components(separatedBy: #""value":1"#).count == 3)
            #expect(channel.isActive)
        }
    }

    @Test func aBodyOverItsLimitIsTooLargeAndTheConnectionGoesOn() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let limits = ServerLimits(maximumValueBytes: 16)
            let channel = try Self.channel(over: store, limits: limits)
            let body = String(repeating: "1", count: limits.maximumPutBodyBytes + 1)
            try channel.writeInbound(
                ByteBuffer(string: "PUT /v1/prefs/k.v HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    + "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"))
            let written = try FrontReadTests.written(by: channel)
            #expect(written.hasPrefix("HTTP/1.1 413 Payload Too Large\r\n"), "\(written)")
            #expect(written.contains(#""code":"too_large""#))
            #expect(Self.statusLines(written) == ["HTTP/1.1 413 Payload Too Large", "HTTP/1.1 200 OK"])
            #expect(channel.isActive)
        }
    }

    @Test("A request that does not persist closes the connection after its answer", arguments: [
        "GET /v1/prefs/k.v HTTP/1.1\r\nConnection: close\r\n\r\n", "GET /v1/prefs/k.v HTTP/1.0\r\n\r\n",
    ])
    func closesAfterARequestThatDoesNotPersist(request: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try channel.writeInbound(ByteBuffer(string: request + Self.read))
            #expect(Self.statusLines(try FrontReadTests.written(by: channel)) == ["HTTP/1.1 200 OK"])
            #expect(!channel.isActive)
        }
    }

    @Test func closesAnIdleConnectionWhoseClientClosedItsSide() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try channel.writeInbound(ByteBuffer(string: Self.read))
            #expect(Self.statusLines(try FrontReadTests.written(by: channel)) == ["HTTP/1.1 200 OK"])
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            #expect(!channel.isActive)
        }
    }

    @Test func closesAnIdleConnectionAfterTheGraceWhenTheServerStops() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            #expect(channel.isActive)
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(250))
            #expect(!channel.isActive)
        }
    }
}
