import Foundation
import HTTPTypes
import PrefsKit

/// Attachments over HTTP: what an upload's request says about the file (its body is the bytes),
/// and the answer that streams a file back.
extension EndpointRequest {
    /// `filename` (required), `kind` and `alt` from the query; the MIME type from `Content-Type`,
    /// unless that says nothing about the file (then the store takes it from the bytes or the file
    /// name; see ``AttachmentMedia``).
    func attachmentUpload() throws -> AttachmentUpload {
        guard let filename = query["filename"], !filename.isEmpty else {
            throw PrefsError(.invalidRequest, "An upload needs ?filename=, the file's name; the body is the file's bytes.")
        }
        let kind = try query["kind"].map { text in
            guard let kind = Attachment.Kind(rawValue: text) else {
                let kinds = Attachment.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw PrefsError(.invalidRequest, "'\(text)' is not an attachment kind; the kinds are \(kinds).")
            }
            return kind
        }
        return AttachmentUpload(filename: filename, kind: kind, mimeType: uploadedMIMEType(), altText: query["alt"])
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

extension Answer {
    /// An attachment's bytes, streamed as the service reads them, with its MIME type, length
    /// and file name.
    static func file(_ download: AttachmentDownload) -> Answer {
        let attachment = download.attachment
        return Answer(
            status: .ok,
            fields: [
                HTTPField(name: .contentType, value: attachment.mimeType),
                HTTPField(name: .contentDisposition, value: contentDisposition(filename: attachment.filename)),
            ],
            body: .streamed(length: Int(attachment.byteSize), chunks: download.bytes))
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
