import Foundation
import PrefsKit

/// Blobs named by their SHA-256 (`/v1/blobs/{sha256}`): a file's bytes sent to the daemon once,
/// resuming after a cut from the bytes it holds, and read back to a file.
extension PrefsClient {
    /// Where the blob `sha256` stands at the daemon, for this client (`HEAD /v1/blobs/{sha256}`).
    ///
    /// - Parameter sha256: The blob's SHA-256, 64 lowercase hex digits.
    /// - Returns: `held` with its size if the daemon holds it (and this client may read it);
    ///   else `uploading` with the bytes of it this client's upload holds, 0 if none.
    /// - Throws: ``PrefsError`` — `invalid_request` for a name that is not a SHA-256;
    ///   `unreachable` if the daemon cannot be reached.
    public func blobOffset(sha256: String) async throws -> BlobState {
        let response: HTTPResponseData
        do {
            response = try await transport.send(HTTPRequestSpec(method: "HEAD", target: Self.blobPath(sha256)))
        } catch let unanswered as UnansweredRequest {
            throw unanswered.cause
        }
        switch response.status {
        case 200:
            guard let size = response.header("Content-Length").flatMap(Int64.init) else { throw Self.unreadable(response, sha256) }
            return .held(byteSize: size)
        case 404:
            guard let received = response.header(Self.uploadOffset).flatMap(Int64.init) else { throw Self.unreadable(response, sha256) }
            return .uploading(received: received)
        default:
            // A `HEAD`'s answer has no body to say more.
            throw PrefsError(PrefsError.Code(httpStatus: response.status), "prefsd answered HTTP \(response.status) for blob \(sha256).")
        }
    }

    /// Sends the file `file` as the blob `sha256` (`PATCH /v1/blobs/{sha256}`), from the bytes
    /// the daemon holds of it: nothing if it holds it whole. A request cut off midway (the
    /// connection lost, the daemon restarted) keeps what got through, and the upload goes on from
    /// there, as long as each try makes progress within ``writeRetryDeadline``. The file is read
    /// as it is sent, 256 KiB at a time, never held whole.
    ///
    /// - Parameters:
    ///   - sha256: The file's SHA-256, 64 lowercase hex digits.
    ///   - file: The file.
    /// - Returns: The blob's size, once the daemon holds it.
    /// - Throws: ``PrefsError`` — `digest_mismatch` if the file's bytes do not hash to
    ///   `sha256` (nothing is kept), `too_large` over the daemon's attachment limit, `not_found`
    ///   if the file cannot be read, `unreachable` if no try got further before the deadline.
    @discardableResult
    public func uploadBlob(sha256: String, file: URL) async throws -> Int64 {
        try await ResumableUpload.run(patience: writeRetryDeadline, state: { try await blobOffset(sha256: sha256) }) { offset in
            let source = try FileUpload(path: file.path, from: offset)
            let spec = HTTPRequestSpec(
                method: "PATCH", target: Self.blobPath(sha256),
                headers: [
                    ("Content-Type", "application/offset+octet-stream"), (Self.uploadOffset, String(offset)),
                    ("Upload-Length", String(source.size)), ("User-Agent", userAgent),
                ])
            let response: HTTPResponseData
            do {
                response = try await transport.send(spec, body: source.bytes(), length: source.size - offset)
            } catch let unanswered as UnansweredRequest {
                throw unanswered.cause
            }
            guard response.status == 204 || response.status == 409 else { throw Self.error(status: response.status, body: response.body) }
            let held = response.header(Self.uploadOffset).flatMap(Int64.init) ?? 0
            return response.status == 204 && held == source.size ? .held(byteSize: held) : .uploading(received: held)
        }
    }

    /// Reads the blob `sha256` into the file `file` (`GET /v1/blobs/{sha256}`), as it comes,
    /// never holding it whole; the file is made or emptied first, and removed if the read fails.
    ///
    /// - Parameters:
    ///   - sha256: The blob's SHA-256, 64 lowercase hex digits.
    ///   - file: Where to write it.
    /// - Returns: Its size in bytes.
    /// - Throws: ``PrefsError`` — `not_found` if the daemon holds no such blob (or this client
    ///   may not read it), `unreachable` if the connection is lost midway.
    @discardableResult
    public func downloadBlob(sha256: String, to file: URL) async throws -> Int64 {
        let response = try await Self.succeeded(try await transport.stream(HTTPRequestSpec(method: "GET", target: Self.blobPath(sha256))))
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = try? FileHandle(forWritingTo: file) else {
            throw PrefsError(.invalidRequest, "Cannot write \(file.path).")
        }
        defer { try? handle.close() }
        var size: Int64 = 0
        do {
            for try await chunk in response.body {
                try handle.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
        return size
    }

    /// `/v1/blobs/{sha256}`.
    private static func blobPath(_ sha256: String) -> String {
        "/v1/blobs/\(pathSegment(sha256))"
    }

    /// The header that says how many bytes of a blob the daemon holds, or where a body starts.
    private static let uploadOffset = "Upload-Offset"

    /// The error of a `HEAD` whose answer lacks the field it must carry.
    private static func unreadable(_ response: HTTPResponseData, _ sha256: String) -> PrefsError {
        PrefsError(.internal, "prefsd's answer \(response.status) for blob \(sha256) says nothing of its bytes.")
    }
}
