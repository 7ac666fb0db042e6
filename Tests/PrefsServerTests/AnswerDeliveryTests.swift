import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``AnswerDelivery``, what both transports send for an answer or a watch, and ``PlainMethods``,
/// the methods the raw-bytes path takes, from the endpoint table.
@Suite struct AnswerDeliveryTests {
    typealias Feed = FrontAnswerStateMachineTests.Feed

    @Test func headGetsTheHeadAloneWithTheBodysLength() {
        let answer = Answer.json(ByteBuffer(string: "{\"a\":1}"))
        let get = AnswerDelivery(answer, method: .get)
        guard case .whole(let bytes) = get.body else { Issue.record("no body for GET"); return }
        #expect(String(buffer: bytes) == "{\"a\":1}")
        #expect(get.contentLength == 7)
        #expect(!get.closes)
        let head = AnswerDelivery(answer, method: .head)
        guard case .none = head.body else { Issue.record("a body for HEAD"); return }
        #expect(head.contentLength == 7)
        #expect(head.status == .ok)
        #expect(head.fields == answer.fields)

        let file = Answer(status: .ok, fields: [], body: .streamed(length: 3, chunks: AsyncThrowingStream { nil }))
        guard case .file = AnswerDelivery(file, method: .get).body else { Issue.record("no file for GET"); return }
        let fileHead = AnswerDelivery(file, method: .head)
        guard case .none = fileHead.body else { Issue.record("a file for HEAD"); return }
        #expect(fileHead.contentLength == 3)
    }

    @Test func aWatchIsChunkedClosesAndEndsAtOnceForHead() {
        let feed = Feed()
        let watch = AnswerDelivery(events: feed, method: .get)
        guard case .events = watch.body else { Issue.record("no events"); return }
        #expect(watch.contentLength == nil)
        #expect(watch.closes)
        #expect(watch.fields == ServerSentEvent.headFields)
        #expect(feed.ended == 0)
        let head = AnswerDelivery(events: feed, method: .head)
        guard case .none = head.body else { Issue.record("events for HEAD"); return }
        #expect(head.closes)
        #expect(feed.ended == 1)
    }

    @Test func aFeedsItemsBecomeEventsAWaitOrTheEnd() {
        struct Other: Error {}
        guard case .wait = AnswerDelivery.part(for: .waiting) else { Issue.record("waiting"); return }
        guard case .end(nil) = AnswerDelivery.part(for: .ended(nil)) else { Issue.record("ended"); return }
        guard case .end(nil) = AnswerDelivery.part(for: .ended(Other())) else { Issue.record("ended by another error"); return }
        let error = PrefsError(.unavailable, "shutting down")
        guard case .end(let last?) = AnswerDelivery.part(for: .ended(error)) else { Issue.record("no error event"); return }
        #expect(last == ServerSentEvent.encode(error))
    }

    @Test func plainMethodsAreTheEndpointTablesWithHeadForGet() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let methods = PlainMethods(Serving(store).api.endpoints)
            for name in ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH"] {
                #expect(Self.method(name, of: methods)?.rawValue == name)
            }
            for name in ["BREW", "OPTIONS", "TRACE", "CONNECT", "get"] { #expect(Self.method(name, of: methods) == nil) }
        }
        #expect(Self.method("HEAD", of: .of([.put])) == nil)
        #expect(Self.method("HEAD", of: .of([.get])) == .head)
    }

    static func method(_ name: String, of methods: PlainMethods) -> HTTPRequest.Method? {
        Array(name.utf8).withUnsafeBytes { methods.method($0[...]) }
    }
}
