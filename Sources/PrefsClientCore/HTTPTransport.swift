import Foundation

/// One HTTP request to the daemon.
public struct HTTPRequestSpec: Sendable {
    public var method: String
    /// Path and query, percent-encoded: `/v1/prefs/a.b?scope=%2Fx`.
    public var target: String
    public var body: Data?
    public var headers: [(String, String)]

    public init(method: String, target: String, body: Data? = nil, headers: [(String, String)] = []) {
        self.method = method
        self.target = target
        self.body = body
        self.headers = headers
    }
}

/// A complete answer.
public struct HTTPResponseData: Sendable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// An answer whose body arrives over time (a watch).
public struct HTTPStreamingResponse: Sendable {
    public var status: Int
    /// The body's bytes as they arrive.
    public var body: AsyncThrowingStream<Data, any Error>

    public init(status: Int, body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.body = body
    }
}

/// How ``PrefsClient`` reaches the daemon: HTTP/1.1 over its Unix socket
/// (``UnixSocketTransport``). Failures to connect are ``PrefsKit/PrefsError`` `unreachable`
/// naming the socket; a cancelled task's request ends with `CancellationError`.
public protocol HTTPTransport: Sendable {
    /// Sends a request and reads the whole answer.
    func send(_ request: HTTPRequestSpec) async throws -> HTTPResponseData
    /// Sends a request whose body is streamed from `body` as it is produced — `length` bytes
    /// when known beforehand (else the body is sent chunked) — and reads the whole answer. The
    /// request's headers say the body's type. An answer the daemon gives before it has read the
    /// whole body (refusing it) is returned like any other; a ``PrefsKit/PrefsError`` that
    /// `body` throws ends the request and is rethrown.
    func send(_ request: HTTPRequestSpec, body: AsyncThrowingStream<Data, any Error>, length: Int64?) async throws
        -> HTTPResponseData
    /// Sends a request and streams the answer's body.
    func stream(_ request: HTTPRequestSpec) async throws -> HTTPStreamingResponse
}
