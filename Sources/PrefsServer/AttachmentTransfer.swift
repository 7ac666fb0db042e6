import Foundation
import HTTPTypes
import Hummingbird
import PrefsKit

/// Attachments over HTTP: what an upload's request says about the file (its body is the bytes),
/// and the answer that streams a file back.
extension Request {
    /// `filename` (required), `kind` and `alt` from the query; the MIME type from `Content-Type`,
    /// unless that says nothing about the file (then the store takes it from the bytes or the file
    /// name; see ``AttachmentMedia``).
    func attachmentUpload() throws -> AttachmentUpload {
        let query = uri.queryParameters
        guard let filename = query.get("filename"), !filename.isEmpty else {
            throw PrefsError(.invalidRequest, "An upload needs ?filename=, the file's name; the body is the file's bytes.")
        }
        let kind = try query.get("kind").map { text in
            guard let kind = Attachment.Kind(rawValue: text) else {
                let kinds = Attachment.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw PrefsError(.invalidRequest, "'\(text)' is not an attachment kind; the kinds are \(kinds).")
            }
            return kind
        }
        return AttachmentUpload(filename: filename, kind: kind, mimeType: uploadedMIMEType(), altText: query.get("alt"))
    }

    /// `Content-Type` without its parameters, lowercased; nil when absent, malformed, or one
    /// that clients send for any body.
    private func uploadedMIMEType() -> String? {
        guard let header = headers[.contentType] else { return nil }
        let type = header.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        guard type.contains("/"), !Self.genericContentTypes.contains(type) else { return nil }
        return type
    }

    /// Content types that say nothing about a file: HTTP's default for bytes, and the form
    /// encoding `curl --data-binary` sends unless told otherwise.
    private static let genericContentTypes: Set<String> = ["application/octet-stream", "application/x-www-form-urlencoded"]
}

extension Response {
    /// An attachment's bytes, streamed as the service reads them, with its MIME type, length
    /// and file name.
    static func attachment(_ download: AttachmentDownload) -> Response {
        let attachment = download.attachment
        let bytes = download.bytes
        return Response(
            status: .ok,
            headers: [
                .contentType: attachment.mimeType,
                .contentDisposition: contentDisposition(filename: attachment.filename),
            ],
            body: ResponseBody(contentLength: Int(attachment.byteSize)) { writer in
                for try await chunk in bytes {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            }
        )
    }

    /// `attachment; filename="…"` with quotes and backslashes escaped; for a name that is not
    /// ASCII, the quoted form has `_` for each other character and RFC 6266's
    /// `filename*=UTF-8''…` carries the name itself.
    private static func contentDisposition(filename: String) -> String {
        let ascii = String(filename.unicodeScalars.map { $0.isASCII ? Character($0) : "_" })
        let quoted = ascii.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        guard ascii != filename else { return "attachment; filename=\"\(quoted)\"" }
        let encoded = filename.addingPercentEncoding(withAllowedCharacters: attributeCharacters) ?? ascii
        return "attachment; filename=\"\(quoted)\"; filename*=UTF-8''\(encoded)"
    }

    /// RFC 8187's `attr-char`: what an extended parameter value keeps unencoded.
    private static let attributeCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")
}
