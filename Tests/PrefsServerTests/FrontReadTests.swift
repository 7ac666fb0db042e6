import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Logging
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness
import Testing

@testable import PrefsServer

/// What a connection's pipeline needs to answer from a store: the API and the count of
/// connections per event loop. Connections made with one share its memo and its count.
struct Serving {
    let api: API
    let occupancy = EventLoopOccupancy()
    let limits: ServerLimits

    init(_ store: EmbeddedStore, limits: ServerLimits = ServerLimits()) {
        api = API(
            engine: store, limits: limits, metrics: PrefsMetrics.factory(), peers: ConnectionPeers(),
            logger: Logger(label: "test"))
        self.limits = limits
    }

    /// The raw-bytes handler as the server builds it.
    func front() -> FrontAnswerHandler {
        FrontAnswerHandler(
            api: api, methods: PlainMethods(api.endpoints), occupancy: occupancy, maximumBodyBytes: limits.maximumPutBodyBytes)
    }
}

/// ``FrontAnswerHandler``'s reads: which raw request heads it answers itself, what it answers,
/// and that it steps aside for good at the first request that is not plain. (That every path
/// gives the same bytes is checked on a real daemon: `EveryPathAnswersAlikeTests`.)
@Suite struct FrontReadTests {
    /// A connection's pipeline as the server builds it, behind the raw bytes: the front handler
    /// (when `front`), NIO's HTTP/1 encoder and decoder and the HTTP/1 connection rules. What
    /// reaches the end is the general path's (``DecodedAnswerHandler``), and stays unanswered here.
    static func channel(
        over store: EmbeddedStore, front: Bool = true, limits: ServerLimits = ServerLimits(), serving: Serving? = nil
    ) throws -> EmbeddedChannel {
        let serving = serving ?? Serving(store, limits: limits)
        let channel = EmbeddedChannel()
        let pipeline = channel.pipeline.syncOperations
        if front { try pipeline.addHandler(serving.front()) }
        try pipeline.addHandler(HTTPResponseEncoder())
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
        try pipeline.addHandler(HTTP1ConnectionHandler())
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/unused")).wait()
        return channel
    }

    /// Everything written to the connection so far, as text, with the `Date` header's value
    /// blanked (it changes every second).
    static func written(by channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: bytes) }
        return text.replacing(/Date: [^\r]*/, with: "Date: -")
    }

    /// How many request parts reached the general path.
    static func passedOn(by channel: EmbeddedChannel) throws -> Int {
        var parts = 0
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil { parts += 1 }
        return parts
    }

    @Test func answersPlainReadsFromMemory() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.set("k.v", to: ["b": [1, "x"], "a": nil], scope: "/accounts/al@ice")
            let atAlice = try #require(try await store.resolve("k.v", scope: "/accounts/al@ice/x", explain: false).compactWireJSON)
            let atRoot = try #require(try await store.resolve("k.v", scope: "/", explain: false).compactWireJSON)
            let unset = try #require(try await store.resolve("never.set", scope: "/", explain: false).compactWireJSON)
            let requests = [
                ("GET /v1/prefs/k.v?scope=%2Faccounts%2Fal%40ice%2Fx HTTP/1.1\r\nHost: prefsd\r\n\r\n", atAlice),
                ("GET /v1/prefs/never.set HTTP/1.1\r\nhost: x\r\nAccept: */*\r\nUser-Agent: t/1 (x)\r\n\r\n", unset),
                ("GET /v1/prefs/k.v?scope=/accounts/al@ice/x HTTP/1.1\r\nConnection:  Close \r\n\r\n", atAlice),
                ("GET /v1/prefs/k%2Ev HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", atRoot),
                ("GET /v1/prefs/k.v HTTP/1.1\r\nConnection: keep-alive\r\nConnection: TE, close\r\nTE: trailers\r\n\r\n", atRoot),
                ("GET /v1/prefs/k.v HTTP/1.1\r\nConnection: Keep-Alive, Close\r\n\r\n", atRoot),
            ]
            for (request, body) in requests {
                let front = try Self.channel(over: store)
                try front.writeInbound(ByteBuffer(string: request))
                #expect(try Self.passedOn(by: front) == 0)
                let close = request.lowercased().contains("close")
                // Nothing is set or locked at any of these very scopes: the key's revision there is 0.
                let expected = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"0\"\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Date: -\r\nServer: prefsd\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + body
                #expect(try Self.written(by: front) == expected, "\(request)")
                #expect(front.isActive == !close)
            }
        }
    }

    @Test func answersPipelinedReadsInOrderAndWaitsForAWholeHead() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.set("a.one", to: 1, scope: "/")
            try await store.set("a.two", to: 2, scope: "/")
            let channel = try Self.channel(over: store)
            try channel.writeInbound(
                ByteBuffer(string: "GET /v1/prefs/a.one HTTP/1.1\r\n\r\nGET /v1/prefs/a.two HTTP/1.1\r\n\r\nGET /v1/prefs/a.o"))
            let firstTwo = try Self.written(by: channel)
            #expect(firstTwo.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(firstTwo.range(of: #""value":1"#)!.lowerBound < firstTwo.range(of: #""value":2"#)!.lowerBound)
            try channel.writeInbound(ByteBuffer(string: "ne HTTP/1.1\r\n"))
            #expect(try Self.written(by: channel).isEmpty)
            try channel.writeInbound(ByteBuffer(string: "\r\n"))
            #expect(try Self.written(by: channel).contains(#""value":1"#))
            #expect(try Self.passedOn(by: channel) == 0)
        }
    }

    @Test("Leaves every head that is not plain to the pipeline behind it, as if absent", arguments: [
        "PUT /v1/prefs/k.v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n1\r\n0\r\n\r\n",
        "GET /v1/prefs/k.v HTTP/1.0\r\n\r\n",
        "GET /v1/prefs/k.v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /v1/prefs/k.v HTTP/1.1\r\nX-Folded: a\r\n b\r\n\r\n",
        "GET /v1/prefs/k.v HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "PUT /v1/prefs/k.v HTTP/1.1\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n1",
        "POST /v1/drafts/3F2504E0-4F89-11D3-9A0C-0305E82C3301/attachments HTTP/1.1\r\nContent-Length: 1\r\n\r\nx",
    ])
    func isTransparentToOthers(request: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let front = try Self.channel(over: store)
            let behind = try Self.channel(over: store, front: false)
            // The same answer, the same parts to the router, the same error from the decoder.
            let frontError = Result { try front.writeInbound(ByteBuffer(string: request)) }.error
            let behindError = Result { try behind.writeInbound(ByteBuffer(string: request)) }.error
            #expect(frontError == behindError)
            #expect(try Self.written(by: front) == (try Self.written(by: behind)))
            #expect(try Self.passedOn(by: front) == (try Self.passedOn(by: behind)))
        }
    }

    @Test func neverOvertakesARequestWithTheRouter() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"))
            #expect(try Self.passedOn(by: channel) == 2)
            // The first is with the router: a plain read after it is the router's too.
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"))
            #expect(try Self.written(by: channel).isEmpty)
            #expect(try Self.passedOn(by: channel) == 2)
        }
    }

    /// The parts of a plain head, or what `parse` found instead.
    static func parsed(_ text: String) -> String {
        switch PlainHead.parse(ByteBuffer(string: text), methods: .of([.get, .put, .delete])) {
        case .head(let head):
            "\(head.method.rawValue) \(head.target) length \(head.length) body \(head.bodyLength) close \(head.connection.close)"
        case .incomplete: "incomplete"
        case .other: "other"
        }
    }

    @Test func readsOnlyPlainHeads() {
        #expect(Self.parsed("GET /v1/prefs/k.v?scope=/a HTTP/1.1\r\nConnection: close\r\n\r\n")
            == "GET /v1/prefs/k.v?scope=/a length 58 body 0 close true")
        #expect(Self.parsed("PUT /v1/prefs/k.v HTTP/1.1\r\ncontent-length:  12 \r\n\r\n{") == "PUT /v1/prefs/k.v length 52 body 12 close false")
        #expect(Self.parsed("DELETE /v1/locks/k.v HTTP/1.1\r\n\r\n") == "DELETE /v1/locks/k.v length 33 body 0 close false")
        #expect(Self.parsed("GET /v1/pr") == "incomplete")
        #expect(Self.parsed("GET /v1/prefs/k.v HTTP/1.1\r\nHost: x\r") == "incomplete")
        #expect(Self.parsed("GET /v1/prefs/k.v HTTP/1.0\r\n\r\n") == "other")
        #expect(Self.parsed("BREW /v1/prefs/k.v HTTP/1.1\r\n\r\n") == "other")
        #expect(Self.parsed("GET /v1/prefs/k.v HTTP/1.1\nHost: x\n\n") == "other")
        #expect(Self.parsed("GET /v1/prefs/k v HTTP/1.1\r\n\r\n") == "other")
        #expect(Self.parsed("GET /v1/prefs/k.v HTTP/1.1\r\nBad Name: x\r\n\r\n") == "other")
        #expect(Self.parsed("GET /v1/prefs/k.v HTTP/1.1\r\nX: \u{1}\r\n\r\n") == "other")
        #expect(Self.parsed("PUT /v1/prefs/k.v HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n") == "other")
        #expect(Self.parsed("PUT /v1/prefs/k.v HTTP/1.1\r\nContent-Length: +1\r\n\r\n") == "other")
        #expect(Self.parsed("PUT /v1/prefs/k.v HTTP/1.1\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n") == "other")
        #expect(Self.parsed("PUT /v1/prefs/k.v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == "other")
    }

    @Test func answersOnlyWhileTheConnectionTakesThem() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            try await store.set("a.one", to: 1, scope: "/")
            let channel = try Self.channel(over: store)
            channel.isWritable = false
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.one HTTP/1.1\r\n\r\nGET /v1/prefs/a.two HTTP/1.1\r\n\r\n"))
            #expect(try Self.written(by: channel).isEmpty)
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
            let answers = try Self.written(by: channel)
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(answers.range(of: #""value":1"#)!.lowerBound < answers.range(of: #""source":"none""#)!.lowerBound)
        }
    }

    /// What puts the general path behind the handler (``ConnectionSetupHandler``): reported
    /// when the handler steps aside, never while it answers requests itself, and as false when
    /// the connection closes first; a connection whose handlers could not be set up closes.
    @Test func reportsWhetherItSteppedAside() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            let answered = try Self.channel(over: store, serving: serving)
            let reported = Mutex<[Bool]>([])
            let front = try answered.pipeline.syncOperations.handler(type: FrontAnswerHandler.self)
            front.stepsAside = { steppedAside in reported.withLock { $0.append(steppedAside) } }
            try answered.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"))
            #expect(try Self.written(by: answered).hasPrefix("HTTP/1.1 200 OK"))
            #expect(reported.withLock { $0 } == [])
            _ = try answered.finish()
            #expect(reported.withLock { $0 } == [false])

            let passed = try Self.channel(over: store, serving: serving)
            let told = Mutex<[Bool]>([])
            let steppingAside = try passed.pipeline.syncOperations.handler(type: FrontAnswerHandler.self)
            steppingAside.stepsAside = { steppedAside in told.withLock { $0.append(steppedAside) } }
            try passed.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.0\r\n\r\n"))
            #expect(told.withLock { $0 } == [true])
            #expect(try Self.passedOn(by: passed) == 2)
            _ = try passed.finish(acceptAlreadyClosed: true)
            #expect(told.withLock { $0 } == [true])

            // What steps aside could not set up what takes the bytes: the connection closes.
            let failing = try Self.channel(over: store, serving: serving)
            let cannotStepAside = try failing.pipeline.syncOperations.handler(type: FrontAnswerHandler.self)
            cannotStepAside.stepsAside = { _ in throw ChannelError.ioOnClosedChannel }
            try failing.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.0\r\n\r\n"))
            #expect(!failing.isActive)
        }
    }

    /// What the server gives the handler to run as it steps aside holds the connection and the
    /// handler: the handler lets go of it once it has stepped aside or the connection has closed,
    /// or every connection would stay in memory (3.2 KiB each, found by opening and closing
    /// 20 000).
    @Test func letsGoOfWhatItRunsAsItStepsAside() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let serving = Serving(store)
            weak var closedFront: FrontAnswerHandler?
            weak var steppedFront: FrontAnswerHandler?
            for stepsAside in [false, true] {
                let channel = try Self.channel(over: store, serving: serving)
                let front = try channel.pipeline.syncOperations.handler(type: FrontAnswerHandler.self)
                // As the server's does: it holds the handler itself.
                front.stepsAside = { _ in _ = (channel, front) }
                if stepsAside {
                    steppedFront = front
                    try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.0\r\n\r\n"))
                } else {
                    closedFront = front
                    try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"))
                }
                _ = try channel.finish(acceptAlreadyClosed: true)
            }
            #expect(closedFront == nil)
            #expect(steppedFront == nil)
        }
    }

    /// A connection whose client has closed its side with nothing to answer is closed: nothing
    /// behind the front handler is there yet to close it.
    @Test func closesAnIdleConnectionWhoseInputClosed() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\n\r\n"))
            #expect(try Self.written(by: channel).hasPrefix("HTTP/1.1 200 OK"))
            #expect(channel.isActive)
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            #expect(!channel.isActive)
            #expect(try Self.passedOn(by: channel) == 0)
        }
    }

    @Test func stepsAsideWhenTheServerStartsToStop() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Self.channel(over: store)
            // A head cut short, then shutdown: the bytes go on to the decoder, with what follows.
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/k.v HTTP/1.1\r\n"))
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            try channel.writeInbound(ByteBuffer(string: "\r\n"))
            #expect(try Self.written(by: channel).isEmpty)
            #expect(try Self.passedOn(by: channel) == 2)
        }
    }
}

extension Result where Success == Void {
    /// What the failure says, if it failed.
    fileprivate var error: String? {
        guard case .failure(let error) = self else { return nil }
        return "\(error)"
    }
}
