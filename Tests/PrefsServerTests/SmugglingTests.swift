import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// The request-smuggling cases, where their framing is decided, without sockets: the raw-bytes
/// fast path takes none of them and hands each, with all it holds, to NIO's decoder; there a
/// head that cannot be framed (or, which NIO takes, an HTTP/1.0 one with `Transfer-Encoding`:
/// ``HTTP1ConnectionHandler``) is refused with 400 and the connection closes, and a body that
/// cannot be framed fails its reader (whose endpoint answers the 400; the connection closes after
/// it, ``HTTP1ConnectionStateMachineTests``). The same cases run against a daemon's two listeners
/// in `HTTPFramingTests`.
@Suite struct SmugglingTests {
    /// A smuggling case: the request's bytes, and whether only its body cannot be framed.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var request: String
        var bodyError = false
        var testDescription: String { name }
    }

    static let put = "PUT /v1/prefs/k.v HTTP/1.1\r\nHost: x\r\n"
    static let chunked = "1\r\n7\r\n0\r\n\r\n"

    static let cases = [
        Case(name: "Content-Length, then Transfer-Encoding", request: put + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked),
        Case(name: "Transfer-Encoding, then Content-Length", request: put + "Transfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n" + chunked),
        Case(name: "two equal Content-Lengths", request: put + "Content-Length: 1\r\nContent-Length: 1\r\n\r\n7"),
        Case(name: "two different Content-Lengths", request: put + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n77"),
        Case(name: "Content-Length: 1,1", request: put + "Content-Length: 1,1\r\n\r\n7"),
        Case(name: "Content-Length: +1", request: put + "Content-Length: +1\r\n\r\n7"),
        Case(name: "Content-Length: -1", request: put + "Content-Length: -1\r\n\r\n7"),
        Case(name: "Content-Length in hex", request: put + "Content-Length: 0x1\r\n\r\n7"),
        Case(name: "Transfer-Encoding: chunked, identity", request: put + "Transfer-Encoding: chunked, identity\r\n\r\n" + chunked),
        Case(name: "Transfer-Encoding: xchunked", request: put + "Transfer-Encoding: xchunked\r\n\r\n" + chunked, bodyError: true),
        Case(name: "Transfer-Encoding: identity", request: put + "Transfer-Encoding: identity\r\n\r\n7", bodyError: true),
        Case(name: "whitespace before the colon", request: put + "Content-Length : 1\r\n\r\n7"),
        Case(name: "whitespace before Transfer-Encoding's colon", request: put + "Transfer-Encoding : chunked\r\n\r\n" + chunked),
        Case(name: "obs-fold with a space", request: put + "Content-Length: 1\r\nX-Folded: a\r\n b\r\n\r\n7"),
        Case(name: "obs-fold with a tab", request: put + "Content-Length: 1\r\nX-Folded: a\r\n\tb\r\n\r\n7"),
        Case(name: "Transfer-Encoding folded", request: put + "Transfer-Encoding: identity\r\n chunked\r\n\r\n" + chunked),
        Case(
            name: "overflowing chunk size", request: put + "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFF1\r\n7\r\n0\r\n\r\n",
            bodyError: true),
        Case(name: "bare LF ending a header line", request: put + "Content-Length: 1\nX-Bare: lf\r\n\r\n7"),
        Case(name: "bare LF ending a chunk size", request: put + "Transfer-Encoding: chunked\r\n\r\n1\n7\r\n0\r\n\r\n", bodyError: true),
        Case(name: "NUL in a header value", request: put + "Content-Length: 1\r\nX-Nul: a\u{0}b\r\n\r\n7"),
        Case(name: "space in a header name", request: put + "Content-Length: 1\r\nX Space: a\r\n\r\n7"),
        Case(name: "Transfer-Encoding on HTTP/1.0", request: "PUT /v1/prefs/k.v HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked),
    ]

    /// A plain request the fast path answers.
    static let plain = "GET /v1/prefs/k.v HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test("The fast path takes none: it steps aside, passing on every byte it holds", arguments: cases, [false, true])
    func theFastPathStepsAside(smuggling: Case, afterAPlainRequest: Bool) {
        var machine = FrontAnswerHandler.StateMachine(maximumBodyBytes: 1024, methods: .of([.get, .put]))
        if afterAPlainRequest {
            _ = machine.received(ByteBuffer(string: Self.plain))
            guard case .request(let head, _) = machine.nextRequest(writable: true) else {
                Issue.record("the plain request was not taken")
                return
            }
            machine.requestTaken(head)
        }
        _ = machine.received(ByteBuffer(string: smuggling.request))
        guard case .stepAside(let passing) = machine.nextRequest(writable: true) else {
            Issue.record("took \(smuggling.name)")
            return
        }
        #expect(passing.map { String(buffer: $0) } == smuggling.request)
        #expect(machine.isSteppedAside)
    }

    @Test(
        "Behind the fast path, a head that cannot be framed gets 400 and the connection closes; a body fails its reader",
        arguments: cases, [false, true])
    func theDecoderRefuses(smuggling: Case, afterAPlainRequest: Bool) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try FrontReadTests.channel(over: store)
            if afterAPlainRequest {
                try channel.writeInbound(ByteBuffer(string: Self.plain))
                #expect(try FrontReadTests.written(by: channel).hasPrefix("HTTP/1.1 200 OK\r\n"))
            }
            var error: (any Error)?
            do {
                try channel.writeInbound(ByteBuffer(string: smuggling.request))
            } catch let caught {
                error = caught
            }
            if smuggling.bodyError {
                // The head reached the endpoint, whose body's reader fails with NIO's error.
                #expect(error is HTTPParserError, "\(String(describing: error))")
                #expect(try FrontReadTests.passedOn(by: channel) == 1)
                #expect(try FrontReadTests.written(by: channel).isEmpty)
                return
            }
            #expect(error == nil, "\(String(describing: error))")
            #expect(try FrontReadTests.passedOn(by: channel) == 0)
            let answer = try FrontReadTests.written(by: channel)
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(answer)")
            #expect(answer.contains("\r\nConnection: close\r\n"), "\(answer)")
            #expect(answer.contains(#""code":"invalid_request""#), "\(answer)")
            #expect(!channel.isActive)
        }
    }
}
