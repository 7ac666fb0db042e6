import Foundation
import HTTPTypes
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import PrefsStore
import PrefsWire
import TestHarness
import Testing

@testable import PrefsServer

/// `POST /v1/sync:stream` through the API as a listener asks it: frames in, answers out by
/// number, side by side; what ends a stream, and what only fails its exchange. (A device daemon
/// syncing over streams, through cut connections, runs in the integration tests.)
@Suite struct SyncStreamTests {
    /// A stream opened through `api`: the answer's head, its frames as they come, and the
    /// request's body to send frames on.
    struct OpenStream {
        var status: Int
        var fields: [HTTPField]
        var answers: Answers
        let body: AsyncThrowingStream<Data, any Error>.Continuation
        let writer: FrameWriter

        /// Sends exchange `id`, given as the JSON of a ``SyncRequest``.
        func send(_ id: Int64, _ request: String) {
            body.yield(Data(writer.bytes(for: Array(#"{"id":\#(id),"request":\#(request)}"#.utf8))))
        }

        /// Sends `text` as it is, with a line break.
        func sendRaw(_ text: String) {
            body.yield(Data(writer.bytes(for: Array(text.utf8))))
        }
    }

    /// The answer's frames, read as they come.
    struct Answers {
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator?
        var reader: FrameReader
        var read: [SyncStreamAnswer] = []

        /// The next frame; nil once the stream has ended.
        mutating func next() async throws -> SyncStreamAnswer? {
            while read.isEmpty {
                guard let chunk = try await chunks?.next() else { return nil }
                read = try reader.frames(in: chunk).map { try WireJSON.decode(SyncStreamAnswer.self, from: $0) }
            }
            return read.removeFirst()
        }
    }

    static func open(
        _ api: API, bearer: String?, contentEncoding: String? = nil, acceptEncoding: String? = nil
    ) async -> OpenStream {
        var fields: [HTTPField] = []
        if let bearer { fields.append(HTTPField(name: .authorization, value: "Bearer \(bearer)")) }
        if let contentEncoding { fields.append(HTTPField(name: .contentEncoding, value: contentEncoding)) }
        if let acceptEncoding { fields.append(HTTPField(name: .acceptEncoding, value: acceptEncoding)) }
        var request = EndpointRequest(method: .post, target: "/v1/sync:stream", headers: RequestHeaders(fields))
        let (bodyStream, body) = AsyncThrowingStream<Data, any Error>.makeStream()
        let delivery: Delivery
        switch api.prepare(&request) {
        case .answer(let answer):
            delivery = .answer(answer)
        case .endpoint(let endpoint):
            request.bodyStream = bodyStream
            delivery = api.deliver(request, to: endpoint)
        }
        let answer: Answer
        switch delivery {
        case .answer(let now): answer = now
        case .pending(let start): answer = await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
        case .events(let feed):
            feed.end()
            Issue.record("a stream answered as a watch")
            answer = .error(PrefsError(.invalidRequest, ""))
        }
        let deflated = answer.fields.contains { $0.name == .contentEncoding && $0.value == "deflate" }
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator?
        if case .streamed(nil, let stream) = answer.body { chunks = stream.makeAsyncIterator() }
        return OpenStream(
            status: Int(answer.status.code), fields: answer.fields,
            answers: Answers(chunks: chunks, reader: FrameReader(deflated: deflated, limit: 1 << 24)), body: body,
            writer: FrameWriter(deflated: contentEncoding == "deflate"))
    }

    static let alice: ScopePath = "/accounts/alice"

    @Test func exchangesAreAnsweredByNumberAndAPushIsNotHeldBehindALongPoll() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = SyncEndpointsTests.apis(store)
            let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
            var stream = await Self.open(tcp, bearer: secret)
            #expect(stream.status == 200)
            #expect(stream.fields.first == HTTPField(name: .contentType, value: "application/x-ndjson"))

            stream.send(1, #"{"cursor": 0}"#)
            let first = try #require(await stream.answers.next())
            #expect(first.id == 1 && first.answer?.snapshot != nil)
            let cursor = try #require(first.answer?.cursor)

            // A long poll, then a push behind it: the push is answered first.
            stream.send(2, #"{"cursor": \#(cursor), "wait": 30000}"#)
            stream.send(
                3,
                #"{"cursor": \#(cursor), "mutations": [{"seq": 1, "key": "a.b", "scope": "/accounts/alice", "value": 1, "base": 0, "stamp": "1.0@"}]}"#)
            let pushed = try #require(await stream.answers.next())
            #expect(pushed.id == 3 && pushed.answer?.results.first?.outcome == .applied)

            // Another's change ends the long poll.
            try await store.set("a.c", to: 2, scope: Self.alice)
            let polled = try #require(await stream.answers.next())
            #expect(polled.id == 2 && polled.answer?.changes.map(\.key) == ["a.c"])

            // The device ends its body: the stream ends.
            stream.body.finish()
            #expect(try await stream.answers.next() == nil)
            #expect(try await store.resolve("a.b", scope: Self.alice, explain: false).value == 1)
        }
    }

    @Test func framesAreDeflatedEachWayWhenAsked() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = SyncEndpointsTests.apis(store)
            let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
            var stream = await Self.open(tcp, bearer: secret, contentEncoding: "deflate", acceptEncoding: "gzip, deflate;q=0.5")
            #expect(stream.fields.contains(HTTPField(name: .contentEncoding, value: "deflate")))
            for id in 1...3 {
                stream.send(Int64(id), #"{"cursor": 0}"#)
                #expect(try await stream.answers.next()?.id == Int64(id))
            }
            stream.body.finish()
            #expect(try await stream.answers.next() == nil)

            let plain = await Self.open(tcp, bearer: secret, acceptEncoding: "deflate;q=0")
            #expect(!plain.fields.contains { $0.name == .contentEncoding })
            plain.body.finish()
        }
    }

    @Test func aFrameThatIsNoExchangeEndsTheStreamAndSaysWhy() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = SyncEndpointsTests.apis(store)
            let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
            for (frame, code) in [
                ("not json", "invalid_json"), (#"{"id": 1, "request": {"cursor": 0}, "more": 1}"#, "invalid_request"),
                (#"{"request": {"cursor": 0}}"#, "invalid_request"),
            ] {
                var stream = await Self.open(tcp, bearer: secret)
                stream.sendRaw(frame)
                let last = try #require(await stream.answers.next())
                #expect(last.id == nil && last.error?.code == code, "\(frame)")
                #expect(try await stream.answers.next() == nil, "the stream ended, its body still open")
                stream.body.finish()
            }

            // Bytes that are no zlib stream, sent as deflated.
            var stream = await Self.open(tcp, bearer: secret, contentEncoding: "deflate")
            stream.body.yield(Data(#"{"id": 1, "request": {"cursor": 0}}"#.utf8 + [10]))
            #expect(try await stream.answers.next()?.error?.code == "invalid_request")
            #expect(try await stream.answers.next() == nil)
            stream.body.finish()
        }
    }

    @Test func aFrameLargerThanABodyMayBeEndsTheStream() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let api = API(
                engine: store, limits: ServerLimits(maximumRequestBytes: 1024), metrics: PrefsMetrics.factory(),
                peers: ConnectionPeers(), logger: .init(label: "test")
            ).listening(with: .bearer(fileToken: nil, sessions: ConsoleSessions()))
            let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
            var stream = await Self.open(api, bearer: secret)
            stream.send(1, #"{"cursor": 0, "mutations": [], "wait": 0}"# + String(repeating: " ", count: 2000))
            #expect(try await stream.answers.next()?.error?.code == "too_large")
            #expect(try await stream.answers.next() == nil)
            stream.body.finish()
        }
    }

    @Test func anExchangesRefusalIsItsOwnAndTheStreamGoesOn() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = SyncEndpointsTests.apis(store)
            let reader = try await store.createToken(named: "phone", role: .reader, scope: Self.alice).secret
            var stream = await Self.open(tcp, bearer: reader)
            stream.send(1, SyncEndpointsTests.push)
            let refused = try #require(await stream.answers.next())
            #expect(refused.id == 1 && refused.error?.code == "forbidden")
            stream.send(2, #"{"cursor": 0, "wait": 999999}"#)
            let tooLong = try #require(await stream.answers.next())
            #expect(tooLong.id == 2 && tooLong.error?.code == "invalid_request")
            stream.send(3, #"{"cursor": 0}"#)
            #expect(try await stream.answers.next()?.answer != nil)
            stream.body.finish()
            #expect(try await store.resolve("a.b", scope: Self.alice, explain: false).isSet == false)
        }
    }

    @Test func aStreamNeedsANamedTokenAndAKnownCoding() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (socket, tcp) = SyncEndpointsTests.apis(store)
            let owner = await Self.open(socket, bearer: nil)
            #expect(owner.status == 403)
            let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
            let gzip = await Self.open(tcp, bearer: secret, contentEncoding: "gzip")
            #expect(gzip.status == 400)
            let nobody = await Self.open(tcp, bearer: "prefsd_nobody")
            #expect(nobody.status == 401)
        }
    }

    /// A stream of device `laptop` of `store`, snapshot taken (exchange 1), with a long poll
    /// (exchange 2) under way or about to be.
    static func longPolling(_ store: EmbeddedStore) async throws -> OpenStream {
        let (_, tcp) = SyncEndpointsTests.apis(store)
        let secret = try await store.createToken(named: "laptop", role: .writer, scope: Self.alice).secret
        var stream = await Self.open(tcp, bearer: secret)
        stream.send(1, #"{"cursor": 0}"#)
        let cursor = try #require(await stream.answers.next()?.answer?.cursor)
        stream.send(2, #"{"cursor": \#(cursor), "wait": 30000}"#)
        return stream
    }

    @Test func aRevokedTokensLongPollEndsTheStream() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            var stream = try await Self.longPolling(store)
            // Whether the long poll waits already or is yet to start, it finds the token gone.
            try await store.revokeToken(named: "laptop")
            let last = try #require(await stream.answers.next())
            #expect(last.id == 2 && last.error?.code == "unauthorized")
            #expect(try await stream.answers.next() == nil)
            stream.body.finish()
        }
    }

    @Test func theEngineStoppingEndsTheStream() async throws {
        let store = try EmbeddedStore.temporary()
        var stream = try await Self.longPolling(store)
        await store.close()
        // The long poll answers as the engine stops (or is ended with the stream), then the end.
        while let frame = try await stream.answers.next() { #expect(frame.id == 2) }
        stream.body.finish()
    }
}
