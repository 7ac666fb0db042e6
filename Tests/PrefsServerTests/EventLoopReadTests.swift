import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``EventLoopAnswerHandler``'s reads, in a channel of its own over a real store: which requests
/// it answers itself and which it passes on to the router, and what it answers.
@Suite struct EventLoopReadTests {
    /// What the channel did with one request: the answer it wrote, or the parts it passed on.
    enum Outcome: Equatable {
        case answered(status: HTTPResponse.Status, body: String, close: Bool)
        case passedOn(parts: Int)
    }

    /// Sends `request` (and a `body`, if any) through a handler over `store`.
    static func send(_ request: HTTPRequest, body: String? = nil, to channel: EmbeddedChannel) throws -> Outcome {
        try channel.writeInbound(HTTPRequestPart.head(request))
        if let body { try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: body))) }
        try channel.writeInbound(HTTPRequestPart.end(nil))
        var passed = 0
        while try channel.readInbound(as: HTTPRequestPart.self) != nil { passed += 1 }
        if passed > 0 { return .passedOn(parts: passed) }
        guard case .head(let head) = try channel.readOutbound(as: HTTPResponsePart.self),
            case .body(let bytes) = try channel.readOutbound(as: HTTPResponsePart.self),
            case .end = try channel.readOutbound(as: HTTPResponsePart.self)
        else { throw PrefsError(.internal, "no whole answer") }
        #expect(head.headerFields[.contentType] == "application/json")
        #expect(head.headerFields[.contentLength] == String(bytes.readableBytes))
        #expect(head.headerFields[.date]?.hasSuffix(" GMT") == true)
        return .answered(
            status: head.status, body: String(buffer: bytes), close: head.headerFields[.connection] == "close")
    }

    static func get(_ path: String, headers: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: path, headerFields: headers)
    }

    @Test func answersPlainReadsFromTheStoreExactlyAsTheRouteWould() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.set("k.v", to: ["b": [1, "x"], "a": nil], scope: "/accounts/al@ice")
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))

            let resolved = try await store.resolve("k.v", scope: "/accounts/al@ice/x", explain: false)
            let expected = try #require(resolved.compactWireJSON)
            #expect(try Self.send(Self.get("/v1/prefs/k.v?scope=%2Faccounts%2Fal%40ice%2Fx"), to: channel) == .answered(status: .ok, body: expected, close: false))
            #expect(try Self.send(Self.get("/v1/prefs/k.v?scope=/accounts/al@ice/x"), to: channel) == .answered(status: .ok, body: expected, close: false))
            // Unset, at the root scope by default.
            let unset = try #require(try await store.resolve("never.set", scope: "/", explain: false).compactWireJSON)
            #expect(try Self.send(Self.get("/v1/prefs/never.set"), to: channel) == .answered(status: .ok, body: unset, close: false))
            // A one-shot client's read is answered, then the connection closes.
            let closing = try Self.send(Self.get("/v1/prefs/never.set", headers: [.connection: "close"]), to: channel)
            #expect(closing == .answered(status: .ok, body: unset, close: true))
        }
    }

    @Test func leavesEverythingElseToTheRouter() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))
            let others: [HTTPRequest] = [
                Self.get("/v1/prefs/k.v?scope=/a&explain=1"),  // another parameter
                Self.get("/v1/prefs/k.v?explain=1"),
                Self.get("/v1/prefs/k.v?scope=/a+b"),  // '+' the router may read as a space
                Self.get("/v1/prefs/k.v?scope=%zz"),  // a bad escape
                Self.get("/v1/prefs/Not%20A%20Key"),  // an invalid key: the router words the error
                Self.get("/v1/prefs/k.v?scope=no-slash"),  // an invalid scope
                Self.get("/v1/prefs"),  // the list
                Self.get("/v1/prefs/a/b"),
                Self.get("/v1/status"),
                HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/v1/prefs/k.v"),
                HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/prefs/k.v"),
            ]
            for request in others {
                #expect(try Self.send(request, to: channel) == .passedOn(parts: 2), "\(request)")
                // The router's answer ends, so the next plain read is the handler's again.
                try channel.writeOutbound(HTTPResponsePart.end(nil))
                _ = try channel.readOutbound(as: HTTPResponsePart.self)
            }
            // A read with a body goes to the router whole.
            #expect(try Self.send(Self.get("/v1/prefs/k.v"), body: "x", to: channel) == .passedOn(parts: 3))
        }
    }

    @Test func waitsForTheRoutersAnswerBeforeAnsweringAgain() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))
            // A write is with the router; a read pipelined behind it must not overtake its answer.
            #expect(try Self.send(HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/prefs/k.v"), body: "1", to: channel) == .passedOn(parts: 3))
            #expect(try Self.send(Self.get("/v1/prefs/k.v"), to: channel) == .passedOn(parts: 2))
            for _ in 0..<2 {
                try channel.writeOutbound(HTTPResponsePart.end(nil))
                _ = try channel.readOutbound(as: HTTPResponsePart.self)
            }
            guard case .answered = try Self.send(Self.get("/v1/prefs/k.v"), to: channel) else {
                Issue.record("a read on an idle connection was not answered at once")
                return
            }
            // Once the server starts to stop, everything goes to the router (and its quiesce logic).
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            #expect(try Self.send(Self.get("/v1/prefs/k.v"), to: channel) == .passedOn(parts: 2))
        }
    }

    /// Counts the reads from the socket that reach the channel's head.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    @Test func readsNothingMoreWhileTheClientTakesNoAnswers() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let counter = ReadCounter()
            let channel = EmbeddedChannel(handlers: [counter, EventLoopAnswerHandler(service: store)])
            channel.isWritable = false
            channel.read()
            #expect(counter.reads == 0)
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
            #expect(counter.reads == 1)
            channel.read()
            #expect(counter.reads == 2)
        }
    }
}
