import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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
        let response = try await execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: maximumBodyBytes)
        return HTTPResponseData(status: Int(response.status.code), body: Data(body.readableBytesView))
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

    private func execute(_ spec: HTTPRequestSpec, timeout: TimeAmount) async throws -> HTTPClientResponse {
        guard let url = URL(httpURLWithSocketPath: socketPath, uri: spec.target) else {
            throw PrefsError(.unavailable, "Cannot make a URL for the socket \(socketPath).")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .init(rawValue: spec.method)
        for (name, value) in spec.headers { request.headers.add(name: name, value: value) }
        if let body = spec.body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            return try await client.execute(request, timeout: timeout)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw unreachable("\(error)")
        }
    }

    private func unreachable(_ reason: String) -> PrefsError {
        PrefsError(
            .unavailable,
            "Cannot reach prefsd at \(socketPath): \(reason). Start the daemon with `prefsd`, or point the client at the socket it listens on."
        )
    }
}
