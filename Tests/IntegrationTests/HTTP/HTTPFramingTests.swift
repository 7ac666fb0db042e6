import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// HTTP/1.1 as a careful client or an attacker speaks it, on every path a request can take
/// (``HTTPPath``): a body NIO cannot frame is refused with a 4xx and changes nothing; every
/// request-smuggling case is refused with 400 and a closed connection, on both listeners, on a
/// fresh connection and after either path; `Connection` is a list whose `close` counts anywhere;
/// an HTTP/1.0 client gets the framing it understands.
@Suite struct HTTPFramingTests {
    /// An endpoint that takes a body, with a body it would accept.
    struct BodyEndpoint: CustomTestStringConvertible, Sendable {
        var method: String
        var target: String
        var body: String
        var testDescription: String { "\(method) \(target.prefix { $0 != "?" })" }
    }

    /// Every endpoint that takes a body; `DRAFT` stands for a draft's id.
    static let bodyEndpoints = [
        BodyEndpoint(method: "PUT", target: "/v1/prefs/framing.key", body: "4242"),
        BodyEndpoint(method: "POST", target: "/v1/prefs:batch", body: #"{"operations":[{"op":"set","key":"framing.key","value":1}]}"#),
        BodyEndpoint(method: "PUT", target: "/v1/schema/framing.key", body: #"{"type":"int","max":100000}"#),
        BodyEndpoint(method: "POST", target: "/v1/load", body: #"{"format":1,"values":[{"key":"framing.key","scope":"/","value":7}]}"#),
        BodyEndpoint(method: "POST", target: "/v1/drafts", body: #"{"account":"framing","text":"never stored"}"#),
        BodyEndpoint(method: "POST", target: "/v1/drafts/DRAFT/attachments?filename=a.bin", body: String(repeating: "bytes ", count: 40)),
    ]

    /// A malformed body framing: the head's framing fields and the bytes after the head, for a
    /// body; and whether the client then closes its sending side (a body cut short).
    struct Malformation: CustomTestStringConvertible, Sendable {
        var name: String
        var frame: @Sendable (String) -> (headers: String, bytes: String)
        var hangsUp = false
        var testDescription: String { name }
    }

    static func hex(_ count: Int) -> String { String(count, radix: 16) }

    static let malformations = [
        Malformation(name: "chunk size not hex") { body in
            ("Transfer-Encoding: chunked\r\n", "zz\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "negative chunk size") { body in
            ("Transfer-Encoding: chunked\r\n", "-\(hex(body.utf8.count))\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "overflowing chunk size") { body in
            ("Transfer-Encoding: chunked\r\n", "FFFFFFFFFFFFFFFFFFFFFF\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "chunk longer than declared") { body in
            ("Transfer-Encoding: chunked\r\n", "\(hex(body.utf8.count - 2))\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "chunk shorter than declared", frame: { body in
            ("Transfer-Encoding: chunked\r\n", "\(hex(body.utf8.count + 40))\r\n\(body)\r\n0\r\n\r\n")
        }, hangsUp: true),
        Malformation(name: "no final chunk", frame: { body in
            ("Transfer-Encoding: chunked\r\n", "\(hex(body.utf8.count))\r\n\(body)\r\n")
        }, hangsUp: true),
        Malformation(name: "malformed trailer") { body in
            ("Transfer-Encoding: chunked\r\n", "\(hex(body.utf8.count))\r\n\(body)\r\n0\r\nnot a field\r\n\r\n")
        },
        Malformation(name: "chunk size with junk") { body in
            ("Transfer-Encoding: chunked\r\n", "\(hex(body.utf8.count)) x\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "Content-Length beside chunked") { body in
            ("Content-Length: \(body.utf8.count)\r\nTransfer-Encoding: chunked\r\n", "\(hex(body.utf8.count))\r\n\(body)\r\n0\r\n\r\n")
        },
        Malformation(name: "two Content-Lengths that differ") { body in
            ("Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count + 1)\r\n", body)
        },
        Malformation(name: "Content-Length not a number") { body in
            ("Content-Length: 1x\r\n", body)
        },
        Malformation(name: "body shorter than its Content-Length", frame: { body in
            ("Content-Length: \(body.utf8.count + 100)\r\n", body)
        }, hangsUp: true),
    ]

    @Test(
        "A body that cannot be framed gets a 4xx or a closed connection, never a 5xx, and nothing is stored or staged",
        arguments: HTTPPath.allCases)
    func malformedBodiesAreRefused(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let client = daemon.daemon.client
        let draft = try await client.createDraft(DraftInput(account: "framing", text: "x"))
        let revision = try await client.status().revision
        for endpoint in Self.bodyEndpoints {
            for malformation in Self.malformations {
                let (headers, bytes) = malformation.frame(endpoint.body)
                let target = endpoint.target.replacingOccurrences(of: "DRAFT", with: draft.id.uuidString)
                let connection = try await daemon.connect(path)
                connection.send("\(endpoint.method) \(target) HTTP/1.1\r\nHost: prefsd\r\n\(headers)\r\n\(bytes)")
                if malformation.hangsUp { connection.socket.shutdownSending() }
                let what = "\(endpoint.testDescription), \(malformation.name)"
                guard let answer = await connection.response() else { continue }  // closed: fine
                #expect(answer.status == 400, "\(what): \(answer.statusLine) \(answer.text)")
                #expect(answer.errorCode == "invalid_request", "\(what): \(answer.text)")
                #expect(answer.header("connection")?.lowercased() == "close", "\(what)")
                #expect(await connection.closesWithin(seconds: 5), "\(what): the connection stays open")
            }
        }
        #expect(try await client.status().revision == revision)
        #expect(try await client.resolve("framing.key").source == .none)
        #expect(try await client.schemas()["framing.key"] == nil)
        #expect(try await client.drafts(account: "framing", thread: nil).map(\.id) == [draft.id])
        #expect(try await client.draft(draft.id).attachments.isEmpty)
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: daemon.daemon.databasePath + ".uploads")) ?? []
        #expect(staged.isEmpty)
    }

    /// A request whose framing a server and a proxy in front of it could read two ways — the
    /// request-smuggling cases every HTTP server is tested against: the request line's version,
    /// the header lines after `Host` (and `Authorization` on TCP), each with its own line end,
    /// and the bytes after the head.
    struct Smuggling: CustomTestStringConvertible, Sendable {
        var name: String
        var version = "HTTP/1.1"
        var fields: String
        var body = "7"
        var testDescription: String { name }
    }

    /// A chunked body of one byte, which the smuggling cases below would otherwise store.
    static let chunkedBody = "1\r\n7\r\n0\r\n\r\n"

    /// Every case is refused with 400 and the connection closed, whichever path it reaches.
    static let smugglings = [
        Smuggling(name: "Content-Length, then Transfer-Encoding", fields: "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", body: chunkedBody),
        Smuggling(name: "Transfer-Encoding, then Content-Length", fields: "Transfer-Encoding: chunked\r\nContent-Length: 6\r\n", body: chunkedBody),
        Smuggling(name: "two equal Content-Lengths", fields: "Content-Length: 1\r\nContent-Length: 1\r\n"),
        Smuggling(name: "two different Content-Lengths", fields: "Content-Length: 1\r\nContent-Length: 2\r\n", body: "77"),
        Smuggling(name: "Content-Length: 1,1", fields: "Content-Length: 1,1\r\n"),
        Smuggling(name: "Content-Length: +1", fields: "Content-Length: +1\r\n"),
        Smuggling(name: "Content-Length: -1", fields: "Content-Length: -1\r\n"),
        Smuggling(name: "Content-Length in hex", fields: "Content-Length: 0x1\r\n"),
        Smuggling(name: "Transfer-Encoding: chunked, identity", fields: "Transfer-Encoding: chunked, identity\r\n", body: chunkedBody),
        Smuggling(name: "Transfer-Encoding: xchunked", fields: "Transfer-Encoding: xchunked\r\n", body: chunkedBody),
        Smuggling(name: "Transfer-Encoding: identity", fields: "Transfer-Encoding: identity\r\n"),
        Smuggling(name: "whitespace before the colon", fields: "Content-Length : 1\r\n"),
        Smuggling(name: "whitespace before Transfer-Encoding's colon", fields: "Transfer-Encoding : chunked\r\n", body: chunkedBody),
        Smuggling(name: "obs-fold with a space", fields: "Content-Length: 1\r\nX-Folded: a\r\n b\r\n"),
        Smuggling(name: "obs-fold with a tab", fields: "Content-Length: 1\r\nX-Folded: a\r\n\tb\r\n"),
        Smuggling(name: "Transfer-Encoding folded", fields: "Transfer-Encoding: identity\r\n chunked\r\n", body: chunkedBody),
        Smuggling(name: "overflowing chunk size", fields: "Transfer-Encoding: chunked\r\n", body: "FFFFFFFFFFFFFFFFFFFFFF1\r\n7\r\n0\r\n\r\n"),
        Smuggling(name: "bare LF ending a header line", fields: "Content-Length: 1\nX-Bare: lf\r\n"),
        Smuggling(name: "bare LF ending a chunk size", fields: "Transfer-Encoding: chunked\r\n", body: "1\n7\r\n0\r\n\r\n"),
        Smuggling(name: "NUL in a header value", fields: "Content-Length: 1\r\nX-Nul: a\u{0}b\r\n"),
        Smuggling(name: "space in a header name", fields: "Content-Length: 1\r\nX Space: a\r\n"),
        Smuggling(name: "Transfer-Encoding on HTTP/1.0", version: "HTTP/1.0", fields: "Transfer-Encoding: chunked\r\n", body: chunkedBody),
    ]

    /// How a connection has been used before the smuggling request comes on it.
    enum Start: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// Not at all: the request is the connection's first.
        case fresh
        /// A plain request, answered by the raw-bytes fast path, on the same keep-alive connection.
        case afterFastPath
        /// A request the fast path hands to the general HTTP/1 path (HTTP/1.0 keep-alive).
        case afterGeneralPath

        var testDescription: String { rawValue }

        /// The request sent first, if any.
        var firstRequest: String? {
            switch self {
            case .fresh: nil
            case .afterFastPath: "GET /v1/prefs/smuggling.key HTTP/1.1\r\nHost: prefsd\r\n\r\n"
            case .afterGeneralPath: "GET /v1/prefs/smuggling.key HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
            }
        }
    }

    /// The listener a connection is made to.
    enum Listener: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case unixSocket
        case tcp
        var testDescription: String { rawValue }
    }

    @Test(
        "Every request-smuggling case gets 400 and a closed connection, on both listeners, on a fresh connection or after either path",
        arguments: Listener.allCases, Start.allCases)
    func smugglingIsRefused(listener: Listener, start: Start) async throws {
        let daemon = try await ListeningDaemon()
        let revision = try await daemon.daemon.client.status().revision
        for smuggling in Self.smugglings {
            let connection =
                switch listener {
                case .unixSocket: HTTPConnection(try RawSocket(path: daemon.daemon.socketPath), authorization: nil)
                case .tcp: HTTPConnection(try RawSocket(tcpPort: daemon.port), authorization: "Bearer \(ListeningDaemon.token)")
                }
            if let first = start.firstRequest {
                connection.send(first)
                let answer = try #require(await connection.response(), "\(smuggling.name): the first request")
                #expect(answer.status == 200, "\(smuggling.name): the first request: \(answer.statusLine)")
            }
            // Sent as bytes: a NUL would end a C string.
            let authorization = connection.authorization.map { "Authorization: \($0)\r\n" } ?? ""
            let request = "PUT /v1/prefs/smuggling.key \(smuggling.version)\r\nHost: prefsd\r\n\(authorization)\(smuggling.fields)\r\n\(smuggling.body)"
            connection.socket.send(Data(request.utf8))
            let answer = try #require(await connection.response(), "\(smuggling.name): no answer")
            #expect(answer.status == 400, "\(smuggling.name): \(answer.statusLine) \(answer.text)")
            #expect(answer.errorCode == "invalid_request", "\(smuggling.name): \(answer.text)")
            #expect(answer.header("connection")?.lowercased() == "close", "\(smuggling.name)")
            #expect(await connection.closesWithin(seconds: 5), "\(smuggling.name): the connection stays open")
        }
        #expect(try await daemon.daemon.client.status().revision == revision)
        #expect(try await daemon.daemon.client.resolve("smuggling.key").source == .none)
    }

    @Test("A chunked body with trailers is a body like any other", arguments: [HTTPPath.general, .tcp])
    func trailersAreAccepted(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let connection = try await daemon.connect(path)
        connection.send(
            "PUT /v1/prefs/framing.key HTTP/1.1\r\nHost: prefsd\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "2\r\n42\r\n0\r\nX-Checksum: 1\r\n\r\n")
        let answer = try #require(await connection.response())
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try await daemon.daemon.client.resolve("framing.key").value == 42)
    }

    /// `Connection` header lines that ask to close, `close` somewhere in the list.
    static let closingHeaders = [
        "Connection: close, TE\r\nTE: trailers\r\n",
        "Connection: keep-alive, close\r\n",
        "Connection: CLOSE\r\n",
        "Connection: keep-alive\r\nConnection: Close\r\n",
    ]

    @Test("Connection: close is honoured wherever it is in the list, in any case", arguments: HTTPPath.allCases)
    func connectionCloseAnywhere(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        for target in ["/v1/prefs/framing.key", "/v1/status"] {
            for headers in Self.closingHeaders {
                let connection = try await daemon.connect(path)
                connection.send("GET \(target) HTTP/1.1\r\nHost: prefsd\r\n\(headers)\r\n")
                let answer = try #require(await connection.response(), "\(target) \(headers)")
                #expect(answer.status == 200, "\(target) \(headers)")
                #expect(answer.header("connection")?.lowercased() == "close", "\(target) \(headers)")
                #expect(await connection.closesWithin(seconds: 5), "\(target) \(headers): the connection stays open")
            }
            // And keep-alive alone keeps it open.
            let connection = try await daemon.connect(path)
            connection.send("GET \(target) HTTP/1.1\r\nHost: prefsd\r\nConnection: Keep-Alive\r\n\r\n")
            #expect(await connection.response()?.status == 200)
            connection.send("GET \(target) HTTP/1.1\r\nHost: prefsd\r\n\r\n")
            #expect(await connection.response()?.status == 200)
        }
    }

    @Test("An HTTP/1.0 request gets an HTTP/1.1 status line, and the connection closes unless it asked to keep alive",
          arguments: HTTPPath.allCases)
    func http10PersistsOnlyWithKeepAlive(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        try await daemon.daemon.client.set("framing.key", to: 5)
        for target in ["/v1/prefs/framing.key", "/v1/status"] {
            let closing = try await daemon.connect(path)
            closing.send("GET \(target) HTTP/1.0\r\n\r\n")
            let answer = try #require(await closing.response(), "\(target)")
            #expect(answer.statusLine.hasPrefix("HTTP/1.1 200"), "\(target): \(answer.statusLine)")
            #expect(answer.header("connection")?.lowercased() == "close", "\(target)")
            #expect(await closing.closesWithin(seconds: 5), "\(target): an HTTP/1.0 connection stays open")

            let persisting = try await daemon.connect(path)
            persisting.send("GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let first = try #require(await persisting.response(), "\(target)")
            #expect(first.status == 200)
            #expect(first.header("connection")?.lowercased() == "keep-alive", "\(target)")
            persisting.send("GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(await persisting.response()?.status == 200, "\(target): the second request")
        }
    }

    @Test("A watch to an HTTP/1.0 client is close-delimited, not chunked", arguments: [HTTPPath.general, .tcp])
    func http10WatchIsNotChunked(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        for connectionHeader in ["", "Connection: keep-alive\r\n"] {
            let watch = try await daemon.connect(path)
            watch.send("GET /v1/watch?key=framing.key HTTP/1.0\r\n\(connectionHeader)\r\n")
            let head = await watch.read(until: ": watching\n\n")
            #expect(head.hasPrefix("HTTP/1"), "\(head)")
            #expect(head.range(of: "transfer-encoding", options: .caseInsensitive) == nil, "\(head)")
            #expect(head.range(of: "connection: close", options: .caseInsensitive) != nil, "\(head)")
            #expect(head.hasSuffix("\r\n\r\n: watching\n\n"), "\(head)")
            let revision = try await daemon.daemon.client.set("framing.key", to: .string(connectionHeader)).revision
            let event = await watch.read(until: "id: \(revision)\nevent: set\n")
            #expect(event.contains("\nid: \(revision)\nevent: set\n"), "\(event)")
            // Nothing but events after the head: no chunk sizes.
            let stream = event.components(separatedBy: "\r\n\r\n").dropFirst().joined()
            for line in stream.split(separator: "\n") {
                #expect(["id:", "event:", "data:", ":"].contains { line.hasPrefix($0) }, "\(line)")
            }
        }
    }

    @Test("A watch from a revision the store has not reached is refused, naming the newest", arguments: [HTTPPath.general, .tcp])
    func watchSinceAheadIsRefused(path: HTTPPath) async throws {
        let daemon = try await ListeningDaemon()
        let newest = try await daemon.daemon.client.set("framing.key", to: 1).revision
        for request in [
            "GET /v1/watch?key=framing.key&since=\(newest + 1) HTTP/1.1\r\nHost: prefsd\r\n\r\n",
            "GET /v1/watch?key=framing.key HTTP/1.1\r\nHost: prefsd\r\nLast-Event-ID: \(newest + 50)\r\n\r\n",
        ] {
            let answer = try #require(try await daemon.exchange(request, on: path))
            #expect(answer.status == 400, "\(answer.statusLine)")
            #expect(answer.errorCode == "invalid_request")
            #expect(answer.text.contains("newest revision is \(newest)"), "\(answer.text)")
        }
        // From the newest itself: a live watch.
        let connection = try await daemon.connect(path)
        connection.send("GET /v1/watch?key=framing.key&since=\(newest) HTTP/1.1\r\nHost: prefsd\r\n\r\n")
        #expect(await connection.read(until: ": watching").contains("200 OK"))
        // The Swift client reports it the same (at once: a watch accepted would wait for events).
        let client = daemon.daemon.client
        let error = await #expect(throws: PrefsError.self) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in client.watch(WatchRequest(keys: ["framing.key"], since: newest + 1)) {}
                }
                group.addTask { try await Task.sleep(for: .seconds(10)) }
                try await group.next()
                group.cancelAll()
            }
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("newest revision is \(newest)") == true)
    }

    @Test("Authorization takes the Bearer scheme in any case, the token exactly")
    func bearerSchemeInAnyCase() async throws {
        let daemon = try await ListeningDaemon()
        let token = ListeningDaemon.token
        for (authorization, status) in [
            ("Bearer \(token)", 200), ("bearer \(token)", 200), ("BEARER \(token)", 200), ("bEaReR \(token)", 200),
            ("Bearer  \(token)", 200), ("Bearer \(token.uppercased())", 401), ("Bearer \(token)x", 401),
            ("Bearer\(token)", 401), ("Bearerx \(token)", 401), ("Basic \(token)", 401), ("\(token)", 401),
        ] {
            let socket = try RawSocket(tcpPort: daemon.port)
            let connection = HTTPConnection(socket, authorization: nil)
            connection.send("GET /v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: \(authorization)\r\n\r\n")
            #expect(await connection.response()?.status == status, "\(authorization)")
        }
    }
}
