import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``EventLoopAnswerHandler``'s watches, in a channel of its own over a real store: the answer
/// streamed from the store's feed, its end, and the watches it leaves to the router.
@Suite struct EventLoopWatchTests {
    /// A channel with the handler over `store`, its writes taken at once.
    static func channel(over store: EmbeddedStore) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/unused")).wait()
        return channel
    }

    static func watch(_ query: String, headers: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/watch" + query, headerFields: headers)
    }

    static func send(_ request: HTTPRequest, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(HTTPRequestPart.head(request))
        try channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// The text of the body parts written so far; whether the answer has ended.
    static func written(by channel: EmbeddedChannel) throws -> (head: HTTPResponse?, text: String, ended: Bool) {
        var (head, text, ended): (HTTPResponse?, String, Bool) = (nil, "", false)
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            switch part {
            case .head(let response): head = response
            case .body(let bytes): text += String(buffer: bytes)
            case .end: ended = true
            }
        }
        return (head, text, ended)
    }

    /// The event loop's queued work (the store's wake-ups) run.
    static func settle(_ channel: EmbeddedChannel) {
        channel.embeddedEventLoop.run()
    }

    @Test func streamsTheWatchedKeysChangesAsTheRouteWould() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try Self.send(Self.watch("?key=a.b"), to: channel)
            #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "the router saw the watch")
            let start = try Self.written(by: channel)
            #expect(start.head?.status == .ok)
            #expect(start.head?.headerFields[.contentType] == "text/event-stream")
            #expect(start.head?.headerFields[.cacheControl] == "no-cache")
            #expect(start.text == ": watching\n\n")
            #expect(!start.ended)

            let revision = try await store.set("a.b", to: 1, scope: "/").revision
            _ = try await store.set("other.key", to: 2, scope: "/")
            let second = try await store.set("a.b", to: 3, scope: "/accounts/x").revision
            Self.settle(channel)
            let events = try Self.written(by: channel)
            let expected = try await Self.events(of: store, after: revision - 1, key: "a.b")
            #expect(events.text == expected)
            #expect(events.text.contains("id: \(revision)\n") && events.text.contains("id: \(second)\n"))
            #expect(!events.ended)
        }
    }

    /// What the router's encoding of `key`'s changes after `since` is.
    static func events(of store: EmbeddedStore, after since: Revision, key: String) async throws -> String {
        let latest = try await store.status().revision
        var text = ""
        for try await event in store.watch(WatchRequest(keys: [key], since: since)) {
            text += String(decoding: ServerSentEvent.encode(event), as: UTF8.self)
            if event.revision == latest { break }
        }
        return text
    }

    @Test func endsTheWatchWhenTheClientGoesAndAtShutdown() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let leaving = try Self.channel(over: store)
            try Self.send(Self.watch("?key=a.b"), to: leaving)
            let staying = try Self.channel(over: store)
            try Self.send(Self.watch(""), to: staying)
            #expect(try await store.status().counts.watchers == 2)

            // The client closes its side: the watch ends at once, the answer ends, the
            // connection closes.
            leaving.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            Self.settle(leaving)
            #expect(try Self.written(by: leaving).ended)
            #expect(!leaving.isActive)
            #expect(try await store.status().counts.watchers == 1)

            // Shutdown: the store ends its watches with `shutdown`; the quiesce event is not
            // passed on while streaming (the connection closes after the stream instead).
            staying.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            store.endWatches()
            Self.settle(staying)
            let last = try Self.written(by: staying)
            #expect(last.text.contains("event: shutdown\n"))
            #expect(last.ended)
            #expect(!staying.isActive)
        }
    }

    @Test func aSlowClientIsEndedWithOverflowNotBuffered() async throws {
        var configuration = StoreConfiguration()
        configuration.watchBufferLimit = 4
        try await withStore(try EmbeddedStore.temporary(configuration: configuration)) { store in
            let channel = try Self.channel(over: store)
            try Self.send(Self.watch("?key=a.b"), to: channel)
            _ = try Self.written(by: channel)
            // The connection takes nothing more: events wait in the store's queue, then overflow.
            channel.isWritable = false
            for value in 1...6 { _ = try await store.set("a.b", to: .number(Double(value)), scope: "/") }
            Self.settle(channel)
            #expect(try Self.written(by: channel).text.isEmpty)
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
            let rest = try Self.written(by: channel)
            #expect(rest.text.contains("event: overflow\n"))
            #expect(rest.ended)
        }
    }

    @Test func leavesToTheRouterWatchesTheStoreRefusesAndWatchesDuringShutdown() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            for refused in ["?key=Not%20A%20Key", "?since=nope", "?scope=no-slash"] {
                let channel = try Self.channel(over: store)
                try Self.send(Self.watch(refused), to: channel)
                var parts = 0
                while try channel.readInbound(as: HTTPRequestPart.self) != nil { parts += 1 }
                #expect(parts == 2, "\(refused)")
                #expect(try Self.written(by: channel).head == nil)
            }
            let stopping = try Self.channel(over: store)
            stopping.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            try Self.send(Self.watch("?key=a.b"), to: stopping)
            #expect(try stopping.readInbound(as: HTTPRequestPart.self) != nil)
        }
    }

    @Test func aWatchBehindARequestWithTheRouterWaitsForItsAnswer() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/prefs/a.b")))
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "1")))
            try channel.writeInbound(HTTPRequestPart.end(nil))
            try Self.send(Self.watch("?key=a.b"), to: channel)
            var parts = 0
            while try channel.readInbound(as: HTTPRequestPart.self) != nil { parts += 1 }
            #expect(parts == 3, "only the write went to the router")
            #expect(try Self.written(by: channel).head == nil, "the watch overtook the router's answer")
            // The router answers the write; then the watch starts.
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .noContent)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
            let answers = try Self.written(by: channel)
            #expect(answers.head?.headerFields[.contentType] == "text/event-stream")
            #expect(answers.text == ": watching\n\n")
            #expect(try await store.status().counts.watchers == 1)
        }
    }
}
