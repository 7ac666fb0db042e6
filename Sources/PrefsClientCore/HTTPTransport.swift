import Foundation

/// How ``PrefsClient`` reaches the daemon: HTTP/1.1 over its Unix socket
/// (``UnixSocketTransport``). Failures to connect are ``PrefsKit/PrefsError`` `unreachable`
/// naming the socket; a request that went out and whose connection was lost before its answer
/// throws ``UnansweredRequest``; a cancelled task's request ends with `CancellationError`.
package protocol HTTPTransport: Sendable {
    /// Sends a request and reads the whole answer (the head alone, for `HEAD`).
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
