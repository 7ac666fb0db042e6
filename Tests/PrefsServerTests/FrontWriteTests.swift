import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness
import Testing

@testable import PrefsServer

/// ``FrontAnswerHandler``'s writes: that it answers plain writes, commits at once when its
/// connection is alone on its event loop, leaves every other write to the pipeline behind it, and
/// holds what follows a write until its answer.
@Suite struct FrontWriteTests {
    typealias Pipeline = FrontReadTests

    /// A plain write of `body` to `target`, with `headers` lines before `Content-Length`.
    static func put(_ target: String, _ body: String, headers: String = "") -> String {
        "PUT \(target) HTTP/1.1\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test(
        "Answers plain writes, committing at once when alone on its loop",
        arguments: [
            put("/v1/prefs/a.b?scope=%2Faccounts%2Fx", #"{"z":[1,2],"a":"b"}"#, headers: "Host: prefsd\r\nContent-Type: application/json\r\n"),
            put("/v1/prefs/a.b", "true", headers: "connection: close\r\n"),
            put("/v1/prefs/a.b", "true", headers: "Connection: TE, CLOSE\r\nTE: trailers\r\n"),
            put("/v1/prefs/a.b", "true", headers: "Connection: keep-alive\r\n"),
            put("/v1/prefs/a.locked?scope=/accounts/x", "1"),
            put("/v1/prefs/a.big", "\"" + String(repeating: "x", count: 300) + "\""),
        ])
    func answersPlainWrites(request: String) async throws {
        var configuration = StoreConfiguration()
        configuration.rules.maximumValueBytes = 100
        try await withStore(try EmbeddedStore.temporary(configuration: configuration)) { store in
            try await store.lock("a.locked", scope: "/accounts")
            let front = try Pipeline.channel(over: store, limits: ServerLimits(maximumValueBytes: 400))
            try front.writeInbound(ByteBuffer(string: request))
            #expect(try Pipeline.passedOn(by: front) == 0)
            // Alone on its loop, the write committed before writeInbound returned.
            let answer = try Pipeline.written(by: front)
            let status = Self.expectedStatus(of: request)
            #expect(answer.hasPrefix("HTTP/1.1 \(status)\r\n"), "\(answer)")
            #expect(answer.hasSuffix(status == "200 OK" ? #"{"revision":2}"# : "}"))
            #expect(front.isActive == !request.lowercased().contains("close"))
            #expect(try await store.status().revision == (status == "200 OK" ? 2 : 1))
        }
    }

    /// The status each of ``answersPlainWrites(request:)``'s cases must get: a success, a close,
    /// a refusal by the store, and a value too large.
    static func expectedStatus(of request: String) -> String {
        if request.contains("a.locked") { return "409 Conflict" }
        if request.contains("a.big") { return "413 Payload Too Large" }
        return "200 OK"
    }

    @Test("Refuses bad plain writes itself, with a 4xx, changing nothing", arguments: [
        put("/v1/prefs/a.b", "not json"),
        put("/v1/prefs/a.b?scope=a", "1"),
        put("/v1/prefs/Bad%20Key", "1"),
        "PUT /v1/prefs/a.b HTTP/1.1\r\n\r\n",
    ])
    func refusesBadWrites(request: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Pipeline.channel(over: store, limits: ServerLimits(maximumValueBytes: 10))
            try channel.writeInbound(ByteBuffer(string: request))
            #expect(try Pipeline.passedOn(by: channel) == 0)
            #expect(try Pipeline.written(by: channel).hasPrefix("HTTP/1.1 400 Bad Request"))
            #expect(try await store.status().revision == 0)
        }
    }

    @Test("Leaves a body over its limit, or one the client waits to send, to the pipeline behind it", arguments: [
        put("/v1/prefs/a.b", String(repeating: "1", count: 2000)),
        put("/v1/prefs/a.b", "1", headers: "Expect: 100-continue\r\n"),
    ])
    func leavesOtherWrites(request: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Pipeline.channel(over: store, limits: ServerLimits(maximumValueBytes: 10))
            _ = try? channel.writeInbound(ByteBuffer(string: request))
            #expect(try Pipeline.passedOn(by: channel) > 0)
            #expect(try Pipeline.written(by: channel).isEmpty)
            #expect(try await store.status().revision == 0)
        }
    }

    @Test func waitsForTheWholeBody() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Pipeline.channel(over: store)
            let request = Self.put("/v1/prefs/a.b", #"{"long":"value"}"#)
            try channel.writeInbound(ByteBuffer(string: String(request.dropLast(5))))
            #expect(try Pipeline.written(by: channel).isEmpty)
            try channel.writeInbound(ByteBuffer(string: String(request.suffix(5)) + "GET /v1/prefs/a.b HTTP/1.1\r\n\r\n"))
            let answers = try Pipeline.written(by: channel)
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(answers.contains(#""value":{"long":"value"}"#))
            #expect(try Pipeline.passedOn(by: channel) == 0)
        }
    }

    @Test func answersNothingAfterAClosingWrite() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Pipeline.channel(over: store)
            try channel.writeInbound(
                ByteBuffer(string: Self.put("/v1/prefs/a.b", "1", headers: "Connection: close\r\n") + Self.put("/v1/prefs/a.c", "2")))
            #expect(try Pipeline.written(by: channel).components(separatedBy: "HTTP/1.1 ").count == 2)
            #expect(!channel.isActive)
            #expect(try await store.status().revision == 1)
        }
    }

    /// A connection's front handler and HTTP decoding on a thread-safe test loop, with `before`
    /// nearer the socket and `behind` at the end, on a loop that carries another connection too:
    /// its writes go to the store's writer, and are answered from there.
    static func sharedLoopChannel(
        _ serving: Serving, before: (any ChannelHandler & Sendable)? = nil, behind: (any ChannelHandler & Sendable)? = nil
    ) async throws -> NIOAsyncTestingChannel {
        try await NIOAsyncTestingChannel { channel in
            let pipeline = channel.pipeline.syncOperations
            if let before { try pipeline.addHandler(before) }
            try pipeline.addHandlers([
                serving.front(),
                ByteToMessageHandler(HTTPRequestDecoder()),
            ])
            if let behind { try pipeline.addHandler(behind) }
            serving.occupancy.connectionOpened(on: channel.eventLoop)
        }
    }

    /// Records whether the server's start of shutdown reached the end of the pipeline.
    final class QuiesceRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = Any
        private let quiesced = Mutex(false)
        /// Whether it has.
        var hasQuiesced: Bool { quiesced.withLock { $0 } }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent { quiesced.withLock { $0 = true } }
        }
    }

    @Test func whatFollowsAWriteWaitsForItsAnswerWhenTheWriterCommitsIt() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            let recorder = QuiesceRecorder()
            let channel = try await Self.sharedLoopChannel(serving, behind: recorder)
            #expect(!serving.occupancy.isAlone(on: channel.eventLoop))
            // The write, a read of its key, and shutdown's start, all before the write is answered.
            try await channel.testingEventLoop.executeInContext {
                let pipeline = channel.pipeline.syncOperations
                pipeline.fireChannelRead(
                    NIOAny(ByteBuffer(string: Self.put("/v1/prefs/a.b", "1") + "GET /v1/prefs/a.b HTTP/1.1\r\n\r\n")))
                pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                #expect(!recorder.hasQuiesced)
            }
            let first = String(buffer: try await channel.waitForOutboundWrite(as: ByteBuffer.self))
            let second = String(buffer: try await channel.waitForOutboundWrite(as: ByteBuffer.self))
            #expect(first.hasPrefix("HTTP/1.1 200 OK") && first.hasSuffix(#"{"revision":1}"#))
            // The read saw the write, and shutdown reached the handlers behind only after both.
            #expect(second.contains(#""value":1"#))
            #expect(recorder.hasQuiesced)
            #expect(try await channel.readInbound(as: HTTPServerRequestPart.self) == nil)
        }
    }

    /// Counts the reads asked of the socket.
    final class ReadCounter: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = Any
        private let count = Mutex(0)
        /// How many.
        var reads: Int { count.withLock { $0 } }

        func read(context: ChannelHandlerContext) {
            count.withLock { $0 += 1 }
            context.read()
        }
    }

    @Test func readsOnWhileAWriteAwaitsItsCommitUpToALimit() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            let counter = ReadCounter()
            let channel = try await Self.sharedLoopChannel(serving, before: counter)
            let read = "GET /v1/prefs/a.b HTTP/1.1\r\n\r\n"
            let reads = FrontAnswerHandler.maximumPendingBytes / read.utf8.count + 1
            let readsAsked = try await channel.testingEventLoop.executeInContext { () -> [Int] in
                let pipeline = channel.pipeline.syncOperations
                var asked = [counter.reads]
                // A write, then less than the limit: reading goes on.
                pipeline.fireChannelRead(NIOAny(ByteBuffer(string: Self.put("/v1/prefs/a.b", "1") + read)))
                pipeline.fireChannelReadComplete()
                asked.append(counter.reads)
                // Past the limit: reading stops until the write is answered.
                pipeline.fireChannelRead(NIOAny(ByteBuffer(string: String(repeating: read, count: reads))))
                pipeline.fireChannelReadComplete()
                asked.append(counter.reads)
                return asked
            }
            #expect(readsAsked[1] == readsAsked[0] + 1)
            #expect(readsAsked[2] == readsAsked[1])
            // The write's answer, then the reads', in order; then reading resumes.
            var answers: [String] = []
            for _ in 0..<(reads + 2) { answers.append(String(buffer: try await channel.waitForOutboundWrite(as: ByteBuffer.self))) }
            #expect(answers[0].hasPrefix("HTTP/1.1 200 OK") && answers[0].hasSuffix(#"{"revision":1}"#))
            #expect(answers.dropFirst().allSatisfy { $0.hasPrefix("HTTP/1.1 200 OK") && $0.contains(#""value":1"#) })
            #expect(counter.reads > readsAsked[2])
        }
    }

    @Test func countsTheConnectionsOfItsLoop() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            let occupancy = serving.occupancy
            let loop = EmbeddedEventLoop()
            let channels = try (0..<2).map { _ in
                let channel = EmbeddedChannel(loop: loop)
                try channel.pipeline.syncOperations.addHandler(serving.front())
                return channel
            }
            #expect(!occupancy.isAlone(on: loop))
            _ = try channels[0].finish()
            #expect(occupancy.isAlone(on: loop))
            _ = try channels[1].finish()
            #expect(occupancy.isAlone(on: loop))
        }
    }

    @Test func aConnectionThatWatchesNoLongerCounts() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            let occupancy = serving.occupancy
            let loop = EmbeddedEventLoop()
            let (writer, watcher) = (EmbeddedChannel(loop: loop), EmbeddedChannel(loop: loop))
            for channel in [writer, watcher] { try channel.pipeline.syncOperations.addHandler(serving.front()) }
            #expect(!occupancy.isAlone(on: loop))
            try watcher.writeInbound(ByteBuffer(string: "GET /v1/watch?key=a.b HTTP/1.1\r\n\r\n"))
            #expect(try watcher.readOutbound(as: ByteBuffer.self).map(String.init(buffer:))?.hasPrefix("HTTP/1.1 200 OK") == true)
            // The writer's commits may be on its loop now: the watcher sends no requests.
            #expect(occupancy.isAlone(on: loop))
            // Once only: the watcher's end takes nothing more off the count.
            _ = try? watcher.finish()
            let another = EmbeddedChannel(loop: loop)
            try another.pipeline.syncOperations.addHandler(serving.front())
            #expect(!occupancy.isAlone(on: loop))
            _ = try another.finish()
            _ = try writer.finish()
        }
    }
}
