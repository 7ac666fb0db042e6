#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PrefsKit

/// HTTP/1.1 over the daemon's Unix socket with plain POSIX calls, one connection per request,
/// on a thread of its own: no event loops to start, so a short-lived process (`prefsctl`)
/// pays almost nothing before its request, and learns at once when no daemon listens.
public struct UnixSocketTransport: HTTPTransport {
    /// The daemon's socket.
    public let socketPath: String

    public init(socketPath: String) {
        self.socketPath = socketPath
    }

    public func send(_ request: HTTPRequestSpec) async throws -> HTTPResponseData {
        let transport = self
        return try await Self.onOwnThread { try transport.sendBlocking(request) }
    }

    /// Sends a request and reads the whole answer on the calling thread, which waits for it: for
    /// a one-shot process whose main thread has nothing else to do (`prefsctl get`), so that it
    /// needs no other thread at all.
    public func sendBlocking(_ request: HTTPRequestSpec) throws -> HTTPResponseData {
        let connection = try UnixConnection(path: socketPath)
        defer { connection.close() }
        try connection.write(Self.encode(request))
        return try Self.readAnswer(from: connection)
    }

    /// Writes each piece of the body as it comes (framed as chunks when its length is unknown),
    /// never holding more than one piece. If the daemon answers midway — refusing the body — the
    /// rest is not sent and its answer is returned.
    public func send(_ request: HTTPRequestSpec, body: AsyncThrowingStream<Data, any Error>, length: Int64?) async throws
        -> HTTPResponseData
    {
        let socketPath = socketPath
        let connection = try await Self.onOwnThread { try UnixConnection(path: socketPath) }
        defer { connection.close() }
        let chunked = length == nil
        let framing = length.map { "Content-Length: \($0)" } ?? "Transfer-Encoding: chunked"
        var answered = false
        /// Writes `pieces` in order, unless the daemon has answered.
        func write(_ pieces: Data...) async throws {
            guard !answered else { return }
            let written = try await Self.onOwnThread { try pieces.allSatisfy { try connection.writeUnlessAnswered($0) } }
            answered = !written
        }
        try await write(Self.head(of: request, framing: [framing]))
        for try await piece in body where !piece.isEmpty {
            if chunked {
                try await write(Data("\(String(piece.count, radix: 16))\r\n".utf8), piece, Data("\r\n".utf8))
            } else {
                try await write(piece)
            }
            if answered { break }
        }
        if chunked { try await write(Data("0\r\n\r\n".utf8)) }
        return try await Self.onOwnThread { try Self.readAnswer(from: connection) }
    }

    public func stream(_ request: HTTPRequestSpec) async throws -> HTTPStreamingResponse {
        let socketPath = socketPath
        let (head, connection, parser) = try await Self.onOwnThread {
            let connection = try UnixConnection(path: socketPath)
            do {
                try connection.write(Self.encode(request))
                var parser = HTTPResponseParser()
                var early = Data()
                while parser.status == nil {
                    guard let bytes = try connection.read() else {
                        throw connection.closedEarly(true, HTTPParseError.malformed("no answer"))
                    }
                    early.append(try parser.consume(bytes))
                }
                return ((parser.status!, early), connection, parser)
            } catch {
                connection.close()
                throw error
            }
        }
        let body = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.onTermination = { _ in connection.shutdown() }
            Thread {
                var parser = parser
                defer { connection.close() }
                do {
                    if !head.1.isEmpty { continuation.yield(head.1) }
                    while !parser.isComplete {
                        guard let bytes = try connection.read() else {
                            try parser.finish()
                            break
                        }
                        let data = try parser.consume(bytes)
                        if !data.isEmpty { continuation.yield(data) }
                    }
                    continuation.finish()
                } catch let error as HTTPParseError {
                    continuation.finish(throwing: connection.closedEarly(false, error))
                } catch {
                    continuation.finish(throwing: error)
                }
            }.start()
        }
        return HTTPStreamingResponse(status: head.0, body: body)
    }

    static func encode(_ request: HTTPRequestSpec) -> Data {
        guard let body = request.body else { return head(of: request, framing: []) }
        var data = head(of: request, framing: ["Content-Type: application/json", "Content-Length: \(body.count)"])
        data.append(body)
        return data
    }

    /// The request line and headers, then `framing`: the header lines that describe the body.
    private static func head(of request: HTTPRequestSpec, framing: [String]) -> Data {
        var head = "\(request.method) \(request.target) HTTP/1.1\r\nHost: prefsd\r\nConnection: close\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        for line in framing { head += line + "\r\n" }
        head += "\r\n"
        return head.withUTF8 { Data(buffer: $0) }
    }

    /// Reads a whole answer.
    private static func readAnswer(from connection: UnixConnection) throws -> HTTPResponseData {
        var parser = HTTPResponseParser()
        var body = Data()
        do {
            while !parser.isComplete {
                guard let bytes = try connection.read() else {
                    try parser.finish()
                    break
                }
                body.append(try parser.consume(bytes))
            }
        } catch let error as HTTPParseError {
            throw connection.closedEarly(parser.status == nil, error)
        }
        return HTTPResponseData(status: parser.status ?? 0, body: body)
    }

    /// Runs blocking work on a new thread, so it never holds a Swift concurrency thread.
    private static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// A connected Unix stream socket.
final class UnixConnection: Sendable {
    private let descriptor: Int32
    let path: String

    /// Connects, or throws `unreachable` saying why and how to start the daemon.
    init(path: String) throws {
        self.path = path
        do {
            descriptor = try UnixSocket.descriptor(connectedTo: path)
        } catch where error.code == ENAMETOOLONG {
            throw PrefsError(.unreachable, "The socket path \(path) is too long for a Unix socket (over 107 bytes).")
        } catch {
            throw Self.unreachable(path, error.code)
        }
    }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE || errno == ECONNRESET {
                        // Closed before it read the request: refused, most likely (another user).
                        throw closedEarly(true, HTTPParseError.malformed("closed while the request was sent"))
                    }
                    throw PrefsError(.unreachable, "prefsd at \(path) closed the connection: \(String(cString: strerror(errno))).")
                }
                offset += written
            }
        }
    }

    /// Writes `data` unless the daemon answers (or hangs up) first, as it does when it refuses a
    /// request before reading all of its body; returns whether all of it was written. Waits for
    /// room to write *or* an answer, so a daemon that stopped reading cannot leave it blocked.
    func writeUnlessAnswered(_ data: Data) throws -> Bool {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                var events = pollfd(fd: descriptor, events: Int16(POLLIN | POLLOUT), revents: 0)
                guard poll(&events, 1, -1) >= 0 else {
                    if errno == EINTR { continue }
                    throw PrefsError(.unreachable, "Waiting on prefsd at \(path) failed: \(String(cString: strerror(errno))).")
                }
                if events.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { return false }
                let written = send(
                    descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if written < 0 {
                    if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                    if errno == EPIPE || errno == ECONNRESET { return false }
                    throw PrefsError(.unreachable, "prefsd at \(path) closed the connection: \(String(cString: strerror(errno))).")
                }
                offset += written
            }
            return true
        }
    }

    /// The next bytes, or nil at the end of the stream.
    func read() throws -> Data? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { UnixSocket.receive(descriptor, into: $0.baseAddress!, count: $0.count) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count == 0 { return nil }
            if errno == EINTR { continue }
            if errno == ECONNRESET || errno == EBADF || errno == EINVAL { return nil }
            throw PrefsError(.unreachable, "Reading from prefsd at \(path) failed: \(String(cString: strerror(errno))).")
        }
    }

    /// The error for an answer cut short: before any answer, most likely the daemon refused us
    /// (it serves only its own user); midway, the daemon went away.
    func closedEarly(_ beforeAnswer: Bool, _ error: HTTPParseError) -> PrefsError {
        if beforeAnswer {
            return PrefsError(
                .unreachable,
                "prefsd at \(path) closed the connection without answering. It accepts connections only from the user "
                    + "it runs as: run this as that user (or the daemon may have stopped)."
            )
        }
        return PrefsError(.unreachable, "prefsd at \(path) stopped answering midway: \(error)")
    }

    /// Unblocks a pending read (the watcher went away).
    func shutdown() {
        shutdown_(descriptor)
    }

    func close() {
        close_(descriptor)
    }

    private static func unreachable(_ path: String, _ code: Int32) -> PrefsError {
        let reason: String
        switch code {
        case ENOENT: reason = "there is no socket there"
        case ECONNREFUSED: reason = "nothing accepts connections on it (a stale socket file?)"
        case EACCES, EPERM: reason = "permission denied"
        default: reason = String(cString: strerror(code))
        }
        return PrefsError(
            .unreachable,
            "Cannot reach prefsd at \(path): \(reason). Start the daemon with `prefsd` "
                + "(or `prefsd --socket \(path)`), or point --socket / PREFSD_SOCKET at the socket it listens on."
        )
    }
}

private func close_(_ descriptor: Int32) {
    _ = close(descriptor)
}

private func shutdown_(_ descriptor: Int32) {
    _ = shutdown(descriptor, Int32(SHUT_RDWR))
}
