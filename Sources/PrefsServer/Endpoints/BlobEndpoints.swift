import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The endpoints of blobs named by their SHA-256 (``PrefsEngine/uploadBlob(_:offset:length:grant:bytes:)``):
/// how a device sends an attachment's bytes to its upstream once, resumably, before the draft that
/// uses them — `tus`'s way: `HEAD` says how many bytes the store holds (`Upload-Offset`), `PATCH`
/// sends the rest from there (`Upload-Offset`, `Upload-Length`), and `GET` reads a stored blob.
///
/// Sending needs a writer; reading, a reader. A token whose scope is below `/` reads only the
/// blobs an attachment of a draft of an account it covers uses, and those it uploaded: any other
/// is not there for it (404), so that a hash gives nothing away.
enum BlobEndpoints {
    static func all(engine: any EngineServing) -> [Endpoint] {
        [
            // `HEAD` too, which ``API`` routes here: the head alone, and no blob opened for it.
            Endpoint(.get, "/v1/blobs/{sha256}") { request in
                let (sha256, grant) = (try request.sha256(), try request.access())
                return .task {
                    guard request.method == .head else {
                        let blob = try await engine.blobData(sha256, grant: grant)
                        return .blob(blob.bytes, byteSize: blob.byteSize)
                    }
                    switch try await engine.blobState(sha256, grant: grant) {
                    case .held(let byteSize):
                        return .blob(AsyncThrowingStream { nil }, byteSize: byteSize)
                    case .uploading(let received):
                        return .error(PrefsError(.notFound, "There is no blob \(sha256)."), uploadOffset: received)
                    }
                }
            },
            Endpoint(.patch, "/v1/blobs/{sha256}", body: .streamed, role: .writer) { request in
                let (sha256, grant) = (try request.sha256(), try request.access())
                let (offset, length) = (try request.uploadCount(Self.uploadOffset), try request.uploadCount(Self.uploadLength))
                if let sent = request.headers[.contentLength].flatMap(Int64.init), sent > length - offset, offset <= length {
                    throw PrefsError(
                        .invalidRequest,
                        "A body of \(sent) bytes from Upload-Offset \(offset) runs past Upload-Length \(length); nothing was changed.")
                }
                let bytes = request.bodyStream ?? AsyncThrowingStream { nil }
                return .task {
                    do {
                        let held = try await engine.uploadBlob(sha256, offset: offset, length: length, grant: grant, bytes: bytes)
                        return Answer(status: .noContent, fields: [Self.field(uploadOffset: held)], body: .whole(ByteBuffer()))
                    } catch let conflict as BlobOffsetConflict {
                        return .error(conflict.error, uploadOffset: conflict.held)
                    }
                }
            },
        ]
    }

    /// How many bytes of a blob the store holds (a `HEAD`'s answer, a `PATCH`'s answer), or
    /// where a `PATCH`'s body starts.
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    /// The whole blob's size, in bytes (a `PATCH`).
    static let uploadLength = HTTPField.Name("Upload-Length")!

    /// `Upload-Offset: held`.
    static func field(uploadOffset held: Int64) -> HTTPField {
        HTTPField(name: uploadOffset, value: String(held))
    }
}

extension EndpointRequest {
    /// The `{sha256}` path parameter: a SHA-256 as 64 lowercase hex digits.
    func sha256() throws -> String {
        let text = parameters["sha256"] ?? ""
        let isHex = text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        guard text.utf8.count == 64, isHex else {
            throw PrefsError(.invalidRequest, "'\(text.prefix(80))' is not a SHA-256: a blob is named by 64 lowercase hex digits.")
        }
        return text
    }

    /// A header that counts bytes (`Upload-Offset`, `Upload-Length`): a whole number ≥ 0,
    /// required.
    func uploadCount(_ name: HTTPField.Name) throws -> Int64 {
        guard let text = headers[name] else {
            throw PrefsError(.invalidRequest, "A blob's upload needs \(name.rawName): a count of bytes, such as 0.")
        }
        guard let count = Int64(text.trimmingCharacters(in: .whitespaces)), count >= 0 else {
            throw PrefsError(.invalidRequest, "\(name.rawName) takes a whole number of bytes ≥ 0, not '\(text.prefix(40))'.")
        }
        return count
    }
}

extension Answer {
    /// A blob's bytes, streamed as the engine reads them (as ``file(_:)`` streams an
    /// attachment's), `byteSize` of them.
    static func blob(_ bytes: AsyncThrowingStream<Data, any Error>, byteSize: Int64) -> Answer {
        Answer(
            status: .ok, fields: [HTTPField(name: .contentType, value: "application/octet-stream")],
            body: .streamed(length: Int(byteSize), chunks: bytes))
    }

    /// `error`'s answer, saying how many bytes of the blob the store holds for the caller.
    static func error(_ error: PrefsError, uploadOffset held: Int64) -> Answer {
        var answer = Answer.error(error)
        answer.fields.append(BlobEndpoints.field(uploadOffset: held))
        return answer
    }
}
