import Foundation
import PrefsKit
import TestHarness
import Testing

/// The ways a request reaches what answers it in a daemon, each of which must keep the API's
/// promises alike.
enum HTTPPath: String, CaseIterable, CustomTestStringConvertible {
    /// The Unix socket, first request of a connection: plain requests are read from the raw
    /// bytes (`FrontAnswerHandler`), anything else goes on to the general HTTP/1 path.
    case front
    /// The Unix socket, after a request that is not plain: the general HTTP/1 path (NIO's HTTP
    /// decoder, `HTTP1ConnectionHandler`, `DecodedAnswerHandler`) for the rest of the connection.
    case general
    /// The TCP listener, behind the bearer token: its own fast path, then the general one.
    case tcp

    var testDescription: String { rawValue }
}

/// A daemon that also listens on loopback TCP, reached by raw HTTP on any ``HTTPPath``.
final class ListeningDaemon {
    let daemon: Daemon
    let port: UInt16
    static let token = "framing-t0ken"

    /// A daemon started with `arguments` beside its listener's.
    init(arguments: [String] = []) async throws {
        (daemon, port) = try await TCPListenerTests.daemon(token: Self.token, arguments: arguments)
    }

    /// A connection on `path`, ready for a request to take that path: on ``HTTPPath/general``,
    /// a request that is not plain (HTTP/1.0, kept alive) has been answered on it already.
    func connect(_ path: HTTPPath) async throws -> HTTPConnection {
        switch path {
        case .front:
            return HTTPConnection(try RawSocket(path: daemon.socketPath), authorization: nil)
        case .general:
            let connection = HTTPConnection(try RawSocket(path: daemon.socketPath), authorization: nil)
            connection.send("GET /v1/status HTTP/1.0\r\nHost: prefsd\r\nConnection: keep-alive\r\n\r\n")
            let answer = try #require(await connection.response())
            #expect(answer.status == 200)
            return connection
        case .tcp:
            return HTTPConnection(try RawSocket(tcpPort: port), authorization: "Bearer \(Self.token)")
        }
    }

    /// Sends `request` (its head ending in an empty line, then any body) on a new connection on
    /// `path`, and returns the answer (nil if the connection closed without one).
    func exchange(_ request: String, on path: HTTPPath) async throws -> HTTPAnswer? {
        let connection = try await connect(path)
        connection.send(request)
        return await connection.response()
    }
}

/// One HTTP answer as it came over the wire.
struct HTTPAnswer {
    /// The status line, as sent.
    var statusLine: String
    var status: Int
    /// Header fields, names lowercased.
    var headers: [(name: String, value: String)]
    /// The body, unchunked.
    var body: Data
    /// Whether the body came chunked.
    var chunked: Bool

    /// The first value of the header `name` (any case).
    func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The `code` of an error body.
    var errorCode: String? {
        (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error.code
    }
}

/// A raw HTTP/1.x connection that reads answers one at a time.
final class HTTPConnection {
    let socket: RawSocket
    /// The `Authorization` header every request sent on it carries, if any.
    let authorization: String?
    private var buffer = Data()
    /// Whether the daemon has closed the connection.
    private(set) var closed = false

    init(_ socket: RawSocket, authorization: String?) {
        self.socket = socket
        self.authorization = authorization
    }

    /// Sends raw bytes; with an authorization, it goes in after each request line this text
    /// starts with.
    func send(_ text: String) {
        guard let authorization, let lineEnd = text.range(of: "\r\n") else { return socket.send(text) }
        socket.send(String(text[..<lineEnd.upperBound]) + "Authorization: \(authorization)\r\n" + String(text[lineEnd.upperBound...]))
    }

    /// Reads more; false once the connection has closed or nothing came in time.
    private func fill() async -> Bool {
        switch await socket.receive() {
        case .data(let data):
            buffer.append(data)
            return true
        case .closed:
            closed = true
            return false
        case .timedOut:
            return false
        }
    }

    /// The bytes up to and including `marker`, once they have come.
    private func take(through marker: Data) async -> Data? {
        while buffer.range(of: marker) == nil {
            guard await fill() else { return nil }
        }
        let end = buffer.range(of: marker)!.upperBound
        defer { buffer = Data(buffer[end...]) }
        return Data(buffer[..<end])
    }

    private func take(count: Int) async -> Data? {
        while buffer.count < count {
            guard await fill() else { return nil }
        }
        defer { buffer = Data(buffer.dropFirst(count)) }
        return Data(buffer.prefix(count))
    }

    /// The next answer: its head, and its body framed by `Content-Length`, chunks, or the
    /// connection's end; nil if the connection closed (or went silent) before a whole head.
    func response() async -> HTTPAnswer? {
        guard let headData = await take(through: Data("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: headData, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            return nil
        }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var answer = HTTPAnswer(statusLine: statusLine, status: status, headers: headers, body: Data(), chunked: false)
        if let length = answer.header("content-length").flatMap(Int.init) {
            answer.body = await take(count: length) ?? Data()
        } else if answer.header("transfer-encoding")?.lowercased() == "chunked" {
            answer.chunked = true
            while let sizeLine = await take(through: Data("\r\n".utf8)),
                let size = Int(String(decoding: sizeLine.dropLast(2), as: UTF8.self), radix: 16), size > 0,
                let chunk = await take(count: size + 2)
            {
                answer.body.append(chunk.dropLast(2))
            }
        } else {
            answer.body = await readToEnd()
        }
        return answer
    }

    /// Everything until the daemon closes the connection (or goes silent).
    func readToEnd() async -> Data {
        while await fill() {}
        defer { buffer = Data() }
        return buffer
    }

    /// Bytes as they come, until `marker` has come (or the connection closes or goes silent).
    func read(until marker: String) async -> String {
        while buffer.range(of: Data(marker.utf8)) == nil {
            guard await fill() else { break }
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Whether the daemon closes the connection within `seconds`, with nothing more to read.
    func closesWithin(seconds: Int) async -> Bool {
        socket.setReceiveTimeout(seconds: seconds)
        while await fill() {}
        return closed && buffer.isEmpty
    }
}
