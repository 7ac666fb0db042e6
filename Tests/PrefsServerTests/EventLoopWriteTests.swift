import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``EventLoopAnswerHandler``'s writes, in a channel of its own over a real store: the answer
/// after the commit, errors rendered as the router renders them, what it leaves to the router,
/// and the order of what follows a write.
@Suite struct EventLoopWriteTests {
    static func put(_ path: String, _ body: String, to channel: EmbeddedChannel) throws {
        try channel.writeInbound(
            HTTPRequestPart.head(
                HTTPRequest(method: .put, scheme: nil, authority: nil, path: path, headerFields: [.contentLength: "\(body.utf8.count)"])))
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: body)))
        try channel.writeInbound(HTTPRequestPart.end(nil))
    }

    /// The answers written, as status and body, once `count` have been (the store commits on its
    /// own thread; 10 s at most, a liveness bound, not a timing).
    static func answers(_ count: Int, from channel: EmbeddedChannel) async throws -> [(status: Int, body: String)] {
        var answers: [(status: Int, body: String)] = []
        var status = 0
        for _ in 0..<10_000 where answers.count < count {
            channel.embeddedEventLoop.run()
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
                switch part {
                case .head(let head): status = head.status.code
                case .body(let bytes): answers.append((status, String(buffer: bytes)))
                case .end: break
                }
            }
            if answers.count < count { try await Task.sleep(for: .milliseconds(1)) }
        }
        return answers
    }

    @Test func answersAWriteOnceCommittedAsTheRouteWould() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))
            try Self.put("/v1/prefs/a.b?scope=/accounts/x", #"{"z":[1,2],"a":"b"}"#, to: channel)
            #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "the router saw the write")
            let answers = try await Self.answers(1, from: channel)
            let revision = try await store.status().revision
            #expect(answers.first?.status == 200)
            #expect(answers.first?.body == String(decoding: JSONCoding.encoded(WriteResult(revision: revision)), as: UTF8.self))
            #expect(try await store.resolve("a.b", scope: "/accounts/x", explain: false).value == ["a": "b", "z": [1, 2]])
        }
    }

    @Test func rendersAStoreErrorAsTheErrorMiddlewareDoes() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.lock("a.b", scope: "/accounts")
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store))
            try Self.put("/v1/prefs/a.b?scope=/accounts/x", "1", to: channel)
            let answer = try #require(try await Self.answers(1, from: channel).first)
            var expected: PrefsError?
            do { try await store.set("a.b", to: 1, scope: "/accounts/x") } catch let error as PrefsError { expected = error }
            let error = try #require(expected)
            #expect(answer.status == error.code.httpStatus)
            #expect(answer.body == String(decoding: JSONCoding.encoded(ErrorBody(error)), as: UTF8.self))
        }
    }

    @Test func leavesBadBodiesAndOtherWritesToTheRouter() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = EmbeddedChannel(handler: EventLoopAnswerHandler(service: store, limits: ServerLimits(maximumValueBytes: 10)))
            for (path, body) in [
                ("/v1/prefs/a.b", "not json"), ("/v1/prefs/a.b", String(repeating: "1", count: 2000)),
                ("/v1/prefs/a.b?scope=/a&x=1", "1"), ("/v1/prefs/Bad%20Key", "1"), ("/v1/locks/a.b", "1"),
            ] {
                try Self.put(path, body, to: channel)
                var parts = 0
                while try channel.readInbound(as: HTTPRequestPart.self) != nil { parts += 1 }
                #expect(parts >= 3, "\(path)")
                // The router answers; the next request is the handler's again.
                try channel.writeOutbound(HTTPResponsePart.end(nil))
                _ = try channel.readOutbound(as: HTTPResponsePart.self)
            }
            #expect(try await store.status().revision == 0)
        }
    }

    @Test func whatFollowsAWriteWaitsForItsAnswerWhenTheWriterCommitsIt() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let answering = EventLoopAnswering(service: store)
            let recorder = FrontWriteTests.QuiesceRecorder()
            let channel = try await NIOAsyncTestingChannel { channel in
                try channel.pipeline.syncOperations.addHandlers([EventLoopAnswerHandler(answering: answering), recorder])
                // Two connections on the loop: the write goes to the store's writer.
                for _ in 0..<2 { answering.occupancy.connectionOpened(on: channel.eventLoop) }
            }
            // A write, a read of the same key and shutdown's start, all before the write is answered.
            try await channel.testingEventLoop.executeInContext {
                let pipeline = channel.pipeline.syncOperations
                let head = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/prefs/a.b", headerFields: [.contentLength: "1"])
                for part in [HTTPRequestPart.head(head), .body(ByteBuffer(string: "1")), .end(nil)] { pipeline.fireChannelRead(NIOAny(part)) }
                let read = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/prefs/a.b")
                for part in [HTTPRequestPart.head(read), .end(nil)] { pipeline.fireChannelRead(NIOAny(part)) }
                pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                #expect(!recorder.hasQuiesced)
            }
            var bodies: [String] = []
            while bodies.count < 2 {
                if case .body(let bytes) = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self) {
                    bodies.append(String(buffer: bytes))
                }
            }
            #expect(bodies.first == #"{"revision":1}"#)
            // The read saw the write, and shutdown reached the handlers behind only after both.
            #expect(bodies.last?.contains(#""value":1"#) == true)
            #expect(recorder.hasQuiesced)
        }
    }
}
