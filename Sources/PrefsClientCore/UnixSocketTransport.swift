import Foundation
import PrefsKit
import Synchronization

/// HTTP/1.1 over the daemon's Unix socket with plain POSIX calls and no networking library.
///
/// Requests go over keep-alive connections (a ``ConnectionPool``): non-blocking sockets whose
/// waits suspend on one shared thread's `poll` (the ``SocketReactor``), so no request holds a
/// thread of the concurrency pool, and cancelling the task ends its request at once. A request
/// on a connection the daemon closed while it was idle (it restarted) is sent again on a new
/// one; a watch or download streams on a connection of its own, read as its body is asked for.
///
/// For a one-shot process whose thread has nothing else to do (`prefsctl get`),
/// ``sendBlocking(_:)`` sends one request on that thread, starting no other.
package struct UnixSocketTransport: HTTPTransport {
    /// The daemon's socket.
    package let socketPath: String
    /// How long the daemon may leave a request without progress — no byte read or written —
    /// before the request fails as `unreachable` (a hung daemon). A watch, or a download's body,
    /// waits as long as it needs.
    package let timeout: Duration
    private let pool: ConnectionPool

    package init(socketPath: String, timeout: Duration = .seconds(60)) {
        self.socketPath = socketPath
        self.timeout = timeout
        pool = ConnectionPool(path: socketPath, connectTimeout: timeout)
    }

    package func send(_ request: HTTPRequestSpec) async throws -> HTTPResponseData {
        let message = Self.encode(request, keepAlive: true)
        /// Whether the request went out on a kept-alive connection the daemon closed: it may have
        /// been carried out, so a new connection that cannot be made leaves it unanswered.
        var sentOnStaleConnection = false
        while true {
            let lease: ConnectionPool.Lease
            do {
                lease = try await pool.take()
            } catch let error as PrefsError where sentOnStaleConnection && error.code == .unreachable {
                throw UnansweredRequest(cause: error)
            }
            do {
                let (response, reusable) = try await exchange(message, on: lease, expectsBody: request.method != "HEAD")
                pool.giveBack(lease.connection, reusable: reusable)
                return response
            } catch is StaleConnection {
                // Closed by the daemon as the request went out (it restarted, or was killed just
                // as it carried the request out): nothing was answered; send again.
                sentOnStaleConnection = true
                pool.giveBack(lease.connection, reusable: false)
            } catch let error as PrefsError where error.code == .unreachable {
                pool.giveBack(lease.connection, reusable: false)
                throw UnansweredRequest(cause: error)
            } catch {
                pool.giveBack(lease.connection, reusable: false)
                throw error
            }
        }
    }

    /// Sends a request and reads the whole answer on the calling thread, which waits for it: for
    /// a one-shot process whose main thread has nothing else to do (`prefsctl get`), so that it
    /// needs no other thread at all.
    package func sendBlocking(_ request: HTTPRequestSpec) throws -> HTTPResponseData {
        let connection = try UnixConnection(path: socketPath)
        defer { connection.close() }
        try connection.write(Self.encode(request, keepAlive: false))
        var parser = HTTPResponseParser(expectsBody: request.method != "HEAD")
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
            throw DaemonSocketError.closedEarly(socketPath, beforeAnswer: parser.status == nil, error)
        }
        return HTTPResponseData(status: parser.status ?? 0, body: body, headers: parser.headers)
    }

    /// Writes each piece of the body as it comes (framed as chunks when its length is unknown),
    /// never holding more than one piece. If the daemon answers midway — refusing the body — the
    /// rest is not sent and its answer is returned.
    package func send(_ request: HTTPRequestSpec, body: AsyncThrowingStream<Data, any Error>, length: Int64?) async throws
        -> HTTPResponseData
    {
        let lease = try await pool.take()
        let connection = lease.connection
        do {
            let chunked = length == nil
            var sentWhole = try await connection.write(
                Self.head(of: request, keepAlive: true, framing: [length.map { "Content-Length: \($0)" } ?? "Transfer-Encoding: chunked"]),
                stoppingAtAnswer: true, timeout: timeout)
            for try await piece in body where sentWhole && !piece.isEmpty {
                var framed = piece
                if chunked { framed = Data("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Data("\r\n".utf8) }
                sentWhole = try await connection.write(framed, stoppingAtAnswer: true, timeout: timeout)
            }
            if sentWhole, chunked {
                sentWhole = try await connection.write(Data("0\r\n\r\n".utf8), stoppingAtAnswer: true, timeout: timeout)
            }
            let (response, reusable) = try await readAnswer(from: connection, reused: false)
            pool.giveBack(connection, reusable: reusable && sentWhole)
            return response
        } catch let error as PrefsError where error.code == .unreachable {
            pool.giveBack(connection, reusable: false)
            throw UnansweredRequest(cause: error)
        } catch {
            pool.giveBack(connection, reusable: false)
            throw error
        }
    }

    package func stream(_ request: HTTPRequestSpec) async throws -> HTTPStreamingResponse {
        let connection = try await DaemonConnection.open(path: socketPath, timeout: timeout)
        var parser = HTTPResponseParser()
        var early = Data()
        do {
            _ = try await connection.write(Self.encode(request, keepAlive: false), stoppingAtAnswer: false, timeout: timeout)
            while parser.status == nil {
                guard let bytes = try await connection.read(timeout: timeout) else {
                    throw DaemonSocketError.closedEarly(socketPath, beforeAnswer: true, .malformed("no answer"))
                }
                early.append(try parser.consume(bytes))
            }
        } catch {
            connection.close()
            throw Self.answerError(error, path: socketPath, beforeAnswer: true)
        }
        let body = StreamedBody(connection: connection, parser: parser, early: early)
        return HTTPStreamingResponse(status: parser.status ?? 0, body: AsyncThrowingStream(unfolding: { try await body.next() }))
    }

    /// Sends `message` on a pooled connection and reads the answer; whether the connection can
    /// carry the next request. A connection used before that the daemon closed without
    /// answering (it restarted meanwhile) throws ``StaleConnection``.
    private func exchange(_ message: Data, on lease: ConnectionPool.Lease, expectsBody: Bool) async throws -> (HTTPResponseData, Bool) {
        let written: Bool
        do {
            written = try await lease.connection.write(message, stoppingAtAnswer: true, timeout: timeout)
        } catch let error as PrefsError where lease.isReused && error.code == .unreachable {
            throw StaleConnection()
        }
        let (response, reusable) = try await readAnswer(from: lease.connection, reused: lease.isReused, expectsBody: expectsBody)
        return (response, reusable && written)
    }

    /// Reads a whole answer (one without a body, if not `expectsBody`: to `HEAD`); whether the
    /// connection can carry the next request.
    private func readAnswer(from connection: DaemonConnection, reused: Bool, expectsBody: Bool = true) async throws
        -> (HTTPResponseData, Bool)
    {
        var parser = HTTPResponseParser(expectsBody: expectsBody)
        var body = Data()
        var received = false
        do {
            while !parser.isComplete {
                guard let bytes = try await connection.read(timeout: timeout) else {
                    if reused, !received { throw StaleConnection() }
                    try parser.finish()
                    break
                }
                received = true
                body.append(try parser.consume(bytes))
            }
        } catch {
            throw Self.answerError(error, path: socketPath, beforeAnswer: parser.status == nil)
        }
        return (HTTPResponseData(status: parser.status ?? 0, body: body, headers: parser.headers), parser.leavesConnectionReusable)
    }

    /// A malformed or cut-short answer as the error that says so; any other error as it is.
    fileprivate static func answerError(_ error: any Error, path: String, beforeAnswer: Bool) -> any Error {
        guard let error = error as? HTTPParseError else { return error }
        return DaemonSocketError.closedEarly(path, beforeAnswer: beforeAnswer, error)
    }

    static func encode(_ request: HTTPRequestSpec, keepAlive: Bool) -> Data {
        guard let body = request.body else { return head(of: request, keepAlive: keepAlive, framing: []) }
        var data = head(of: request, keepAlive: keepAlive, framing: ["Content-Type: application/json", "Content-Length: \(body.count)"])
        data.append(body)
        return data
    }

    /// The request line and headers, then `framing`: the header lines that describe the body.
    /// Without `keepAlive`, the daemon closes the connection after its answer.
    private static func head(of request: HTTPRequestSpec, keepAlive: Bool, framing: [String]) -> Data {
        var head = "\(request.method) \(request.target) HTTP/1.1\r\nHost: prefsd\r\n"
        if !keepAlive { head += "Connection: close\r\n" }
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        for line in framing { head += line + "\r\n" }
        head += "\r\n"
        return head.withUTF8 { Data(buffer: $0) }
    }
}

/// A kept-alive connection the daemon closed before answering: the request is sent again.
private struct StaleConnection: Error {}

/// The rest of a streamed answer's body, read from its connection as it is asked for — so a
/// watcher that stops reading stops the reading, and no buffer grows. The connection is closed
/// at the body's end, on an error, on cancellation (the reader's task), or when this is released.
private final class StreamedBody: Sendable {
    private let connection: DaemonConnection
    private let state: Mutex<(parser: HTTPResponseParser, early: Data)>

    init(connection: DaemonConnection, parser: HTTPResponseParser, early: Data) {
        self.connection = connection
        state = Mutex((parser, early))
    }

    /// The next body bytes, or nil at the end.
    func next() async throws -> Data? {
        do {
            while true {
                let (isComplete, early) = state.withLock { state in
                    defer { state.early = Data() }
                    return (state.parser.isComplete, state.early)
                }
                if !early.isEmpty { return early }
                if isComplete { break }
                guard let bytes = try await connection.read(timeout: nil) else {
                    try state.withLock { try $0.parser.finish() }
                    break
                }
                let data = try state.withLock { try $0.parser.consume(bytes) }
                if !data.isEmpty { return data }
            }
        } catch {
            connection.close()
            throw UnixSocketTransport.answerError(error, path: connection.path, beforeAnswer: false)
        }
        connection.close()
        return nil
    }
}
