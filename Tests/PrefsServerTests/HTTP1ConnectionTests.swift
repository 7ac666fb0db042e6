import Foundation
import NIOCore
import NIOEmbedded
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// ``HTTP1ConnectionHandler`` in the pipeline as the server builds it, ``ConnectionOptions`` and
/// the bearer token's check.
@Suite struct HTTP1ConnectionTests {
    typealias Pipeline = FrontReadTests

    @Test("Connection is a list of options in any case, over any number of lines")
    func connectionOptions() {
        let cases: [([String], close: Bool, keepAlive: Bool)] = [
            ([], false, false), (["close"], true, false), (["CLOSE"], true, false), (["  Close\t"], true, false),
            (["close, TE"], true, false), (["keep-alive, close"], true, true), (["TE,close"], true, false),
            (["keep-alive"], false, true), (["Keep-Alive", "close"], true, true), (["closed"], false, false),
            (["upgrade"], false, false), ([",,close,,"], true, false), (["clo se"], false, false),
        ]
        for (lines, close, keepAlive) in cases {
            let options = ConnectionOptions(lines)
            #expect(options.close == close, "\(lines)")
            #expect(options.keepAlive == keepAlive, "\(lines)")
        }
        #expect(ConnectionOptions(nil) == ConnectionOptions([String]()))
        #expect(ConnectionOptions("close").persists(http10: false) == false)
        #expect(ConnectionOptions(nil).persists(http10: false))
        #expect(ConnectionOptions(nil).persists(http10: true) == false)
        #expect(ConnectionOptions("keep-alive").persists(http10: true))
        #expect(ConnectionOptions("keep-alive, close").persists(http10: true) == false)
    }

    @Test("The bearer scheme in any case, the token exactly")
    func bearer() {
        let token = Array("s3cret".utf8)
        for (header, matches) in [
            ("Bearer s3cret", true), ("bearer s3cret", true), ("BEARER s3cret", true), ("Bearer   s3cret", true),
            ("Bearer S3cret", false), ("Bearer s3cre", false), ("Bearer s3crett", false), ("Bearers3cret", false),
            ("Bearer", false), ("Bearer ", false), ("Basic s3cret", false), ("Bearer\ts3cret", false), ("", false),
            ("Bearer\u{0}s3cret", false), ("Dearer s3cret", false),
        ] {
            #expect(BearerTokenMiddleware<PrefsRequestContext>.matches(Array(header.utf8), token: token) == matches, "\(header)")
        }
        #expect(!BearerTokenMiddleware<PrefsRequestContext>.matches(Array("Bearer ".utf8), token: []))
    }

    @Test(
        "A head NIO cannot parse gets 400 invalid_request after the answers due, then the connection closes",
        arguments: [
            "PUT /v1/prefs/a.b HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n1",
            "PUT /v1/prefs/a.b HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n1\r\n0\r\n\r\n",
            "GET /v1/prefs/a.b HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "GET /v1/prefs/a.b HTTP/9.9\r\n\r\n",
        ])
    func malformedHead(request: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            for front in [true, false] {
                let channel = try Pipeline.channel(over: store, front: front)
                // A plain read first, answered; then the request NIO cannot parse.
                try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.b HTTP/1.1\r\n\r\n" + request))
                let written = try Pipeline.written(by: channel)
                let answers = written.components(separatedBy: "HTTP/1.1 ").dropFirst()
                #expect(answers.count == 2, "\(written)")
                #expect(answers.first?.hasPrefix("200 OK") == true)
                let refusal = try #require(answers.last)
                #expect(refusal.hasPrefix("400 Bad Request\r\n"), "\(refusal)")
                #expect(refusal.contains("Connection: close\r\n"))
                #expect(refusal.contains(#"{"error":{"code":"invalid_request","message":"The request is not well-formed HTTP/1.1: "#))
                #expect(!channel.isActive)
                #expect(try Pipeline.passedOn(by: channel) == 0)
                #expect(try await store.status().revision == 0)
            }
        }
    }

    @Test("After a request that closes the connection, what cannot be parsed gets no answer")
    func nothingAfterClose() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let channel = try Pipeline.channel(over: store, front: false)
            try channel.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.b HTTP/1.1\r\nConnection: close\r\n\r\nGARBAGE\r\n\r\n"))
            let written = try Pipeline.written(by: channel)
            #expect(written.components(separatedBy: "HTTP/1.1 ").count == 2, "\(written)")
            #expect(written.hasPrefix("HTTP/1.1 200 OK"))
            #expect(!channel.isActive)
        }
    }

    @Test("HTTP/1.0: an HTTP/1.1 status line; the connection closes unless it asks to keep alive")
    func http10() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let closing = try Pipeline.channel(over: store)
            try closing.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.b HTTP/1.0\r\n\r\n"))
            let answer = try Pipeline.written(by: closing)
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(answer.contains("Connection: close\r\n"))
            #expect(!closing.isActive)

            let persisting = try Pipeline.channel(over: store)
            try persisting.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.b HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))
            let first = try Pipeline.written(by: persisting)
            #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(first.contains("Connection: keep-alive\r\n"), "\(first)")
            #expect(persisting.isActive)
            try persisting.writeInbound(ByteBuffer(string: "GET /v1/prefs/a.b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
            #expect(try Pipeline.written(by: persisting).hasPrefix("HTTP/1.1 200 OK\r\n"))
        }
    }
}
