import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PrefsEngine
import PrefsKit

/// A replica's blobs to and from its upstream (`/v1/blobs/{sha256}`), as the device's token.
extension HTTPUpstream: BlobTransport {
    /// How long one request of a blob may take, its bytes included: a blob at the default
    /// attachment limit (100 MiB) over a slow link.
    static let blobRequestTime = TimeAmount.minutes(30)

    /// How long an upload may go without getting further (a cut, an upstream restarting) before
    /// it fails.
    static let blobUploadPatience = Duration.seconds(30)

    package func heldOffset(of sha256: String) async throws -> BlobState {
        let response = try await send(blobRequest(sha256, method: .HEAD), timeout: .seconds(Int64(Self.margin.components.seconds)))
        switch response.status {
        case .ok:
            guard let size = response.headers.first(name: "Content-Length").flatMap(Int64.init) else {
                throw PrefsError(.unavailable, "The upstream \(url) answered HEAD for blob \(sha256) without a Content-Length.")
            }
            return .held(byteSize: size)
        case .notFound:
            guard let received = response.headers.first(name: "Upload-Offset").flatMap(Int64.init) else {
                throw PrefsError(.unavailable, "The upstream \(url) answered 404 for blob \(sha256) without an Upload-Offset: is it a prefsd with blobs?")
            }
            return .uploading(received: received)
        default:
            throw answered(response.status, ByteBuffer())
        }
    }

    package func upload(
        sha256: String, byteSize: Int64, bytes: @escaping @Sendable (_ offset: Int64) async throws -> AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64 {
        try await ResumableUpload.run(patience: Self.blobUploadPatience, state: { try await heldOffset(of: sha256) }) { offset in
            var request = blobRequest(sha256, method: .PATCH)
            request.headers.add(name: "Content-Type", value: "application/offset+octet-stream")
            request.headers.add(name: "Upload-Offset", value: String(offset))
            request.headers.add(name: "Upload-Length", value: String(byteSize))
            request.body = .stream(try await bytes(offset).map { ByteBuffer(data: $0) }, length: .known(byteSize - offset))
            let response = try await send(request, timeout: Self.blobRequestTime)
            guard response.status == .noContent || response.status == .conflict else {
                throw answered(response.status, try await collect(response))
            }
            let held = response.headers.first(name: "Upload-Offset").flatMap(Int64.init) ?? 0
            return response.status == .noContent && held == byteSize ? .held(byteSize: held) : .uploading(received: held)
        }
    }

    package func download(sha256: String) async throws -> AsyncThrowingStream<Data, any Error> {
        let response = try await send(blobRequest(sha256, method: .GET), timeout: Self.blobRequestTime)
        guard response.status == .ok else { throw answered(response.status, try await collect(response)) }
        let reader = BodyReader(response.body, failure: { [self] in mapped($0) })
        return AsyncThrowingStream { try await reader.next() }
    }

    /// Pulls an answer's body one buffer at a time, as its reader asks: what the connection has
    /// not delivered waits in the socket, not in memory.
    private actor BodyReader {
        private var buffers: HTTPClientResponse.Body.AsyncIterator
        private let failure: @Sendable (any Error) -> any Error

        init(_ body: HTTPClientResponse.Body, failure: @escaping @Sendable (any Error) -> any Error) {
            buffers = body.makeAsyncIterator()
            self.failure = failure
        }

        func next() async throws -> Data? {
            // An actor's stored iterator cannot be advanced in place across a suspension.
            var iterator = buffers
            defer { buffers = iterator }
            do {
                return try await iterator.next(isolation: self).map { Data($0.readableBytesView) }
            } catch {
                throw failure(error)
            }
        }
    }

    /// A request of the blob `sha256` by `method`, as the device.
    private func blobRequest(_ sha256: String, method: HTTPMethod) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url + "/v1/blobs/" + PercentEncoding.encoded(sha256, keeping: "-._~"))
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "User-Agent", value: "prefsd/\(prefsVersion) (sync)")
        return request
    }

    /// Sends `request`, its failures to reach the upstream as `unreachable`.
    private func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        do {
            return try await client.execute(request, timeout: timeout)
        } catch {
            throw mapped(error)
        }
    }

    /// An error answer's body, read.
    private func collect(_ response: HTTPClientResponse) async throws -> ByteBuffer {
        do {
            return try await response.body.collect(upTo: 1024 * 1024)
        } catch {
            throw mapped(error)
        }
    }
}
