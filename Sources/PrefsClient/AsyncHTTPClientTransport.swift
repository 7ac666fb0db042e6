import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PrefsClientCore
import PrefsKit

/// HTTP/1.1 over the daemon's Unix socket with AsyncHTTPClient: pooled keep-alive connections
/// on a shared event loop, for applications that talk to the daemon all day.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The daemon's socket.
    public let socketPath: String
    private let client: HTTPClient
    /// The largest whole answer read (dumps can be large).
    private let maximumBodyBytes = 256 * 1024 * 1024

    /// Uses `HTTPClient.shared` unless given a client.
    public init(socketPath: String, client: HTTPClient = .shared) {
        self.socketPath = socketPath
        self.client = client
    }

    public func send(_ request: HTTPRequestSpec) async throws -> HTTPResponseData {
        try await collect(try await execute(request, timeout: .seconds(60)))
    }

    public func send(_ request: HTTPRequestSpec, body: AsyncThrowingStream<Data, any Error>, length: Int64?) async throws
        -> HTTPResponseData
    {
        let buffers = body.map { ByteBuffer(bytes: $0) }
        let streamed = HTTPClientRequest.Body.stream(buffers, length: length.map { .known($0) } ?? .unknown)
        // An upload goes at its source's pace: the deadline only stops a daemon that hangs.
        return try await collect(try await execute(request, streamedBody: streamed, timeout: .minutes(30)))
    }

    public func stream(_ request: HTTPRequestSpec) async throws -> HTTPStreamingResponse {
        // A watch lasts as long as its watcher wants it: no deadline.
        let response = try await execute(request, timeout: .hours(24 * 365))
        let body = AsyncThrowingStream<Data, any Error> { continuation in
            let task = Task {
                do {
                    for try await buffer in response.body {
                        continuation.yield(Data(buffer.readableBytesView))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return HTTPStreamingResponse(status: Int(response.status.code), body: body)
    }

    /// Reads a whole answer.
    private func collect(_ response: HTTPClientResponse) async throws -> HTTPResponseData {
        let body = try await response.body.collect(upTo: maximumBodyBytes)
        return HTTPResponseData(status: Int(response.status.code), body: Data(body.readableBytesView))
    }

    /// Sends `spec`, with its JSON body or else `streamedBody`.
    private func execute(_ spec: HTTPRequestSpec, streamedBody: HTTPClientRequest.Body? = nil, timeout: TimeAmount)
        async throws -> HTTPClientResponse
    {
        guard let url = URL(httpURLWithSocketPath: socketPath, uri: spec.target) else {
            throw PrefsError(.unreachable, "Cannot make a URL for the socket \(socketPath).")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .init(rawValue: spec.method)
        for (name, value) in spec.headers { request.headers.add(name: name, value: value) }
        if let body = spec.body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        } else {
            request.body = streamedBody
        }
        do {
            return try await client.execute(request, timeout: timeout)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as PrefsError {
            throw error
        } catch {
            throw unreachable("\(error)")
        }
    }

    private func unreachable(_ reason: String) -> PrefsError {
        PrefsError(
            .unreachable,
            "Cannot reach prefsd at \(socketPath): \(reason). Start the daemon with `prefsd`, or point the client at the socket it listens on."
        )
    }
}
