import Foundation

/// A file attached to a draft. Its bytes are stored once per content (by ``sha256``) and shared
/// between attachments with the same content.
public struct Attachment: Codable, Sendable, Hashable, Identifiable {
    /// What kind of media it is.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        /// A still image: PNG, JPEG, WebP, HEIC and the like.
        case image
        /// A video.
        case video
        /// An animated GIF.
        case gif
        /// A sound recording.
        case audio
        /// A drawing, such as a sketch; its file may be an image.
        case drawing
        /// Any other file.
        case file

        /// The kind a MIME type suggests.
        ///
        /// - Parameter mimeType: A MIME type such as `image/png`; case does not matter.
        public init(mimeType: String) {
            switch mimeType.lowercased() {
            case "image/gif": self = .gif
            case let type where type.hasPrefix("image/"): self = .image
            case let type where type.hasPrefix("video/"): self = .video
            case let type where type.hasPrefix("audio/"): self = .audio
            default: self = .file
            }
        }
    }

    /// The attachment's id.
    public var id: UUID
    /// The draft it belongs to.
    public var draft: UUID
    /// Its place among the draft's attachments, from 0, dense.
    public var position: Int
    /// What kind of media it is.
    public var kind: Kind
    /// Its MIME type (see `AttachmentMedia`).
    public var mimeType: String
    /// The file's name, without any path (see `Filename/sanitize(_:)`).
    public var filename: String
    /// Its size in bytes.
    public var byteSize: Int64
    /// Lowercase hex SHA-256 of the bytes.
    public var sha256: String
    /// A description for people who cannot see the media.
    public var altText: String?
    /// In pixels, read from the bytes of a PNG, JPEG, GIF or WebP image (see `AttachmentMedia`).
    public var width: Int?
    /// In pixels, read from the bytes of a PNG, JPEG, GIF or WebP image (see `AttachmentMedia`).
    public var height: Int?

    /// An attachment with every field given.
    ///
    /// - Parameters:
    ///   - id: The attachment's ID.
    ///   - draft: The ID of the draft it belongs to.
    ///   - position: Its place among the draft's attachments, from 0.
    ///   - kind: What kind of media it is.
    ///   - mimeType: Its MIME type.
    ///   - filename: The file's name, without any path.
    ///   - byteSize: Its size in bytes.
    ///   - sha256: Lowercase hex SHA-256 of its bytes.
    ///   - altText: A description for people who cannot see the media.
    ///   - width: Its width in pixels, if known.
    ///   - height: Its height in pixels, if known.
    public init(
        id: UUID, draft: UUID, position: Int, kind: Kind, mimeType: String, filename: String, byteSize: Int64,
        sha256: String, altText: String? = nil, width: Int? = nil, height: Int? = nil
    ) {
        self.id = id
        self.draft = draft
        self.position = position
        self.kind = kind
        self.mimeType = mimeType
        self.filename = filename
        self.byteSize = byteSize
        self.sha256 = sha256
        self.altText = altText
        self.width = width
        self.height = height
    }
}

/// Attachment file names: what a client sends is only a label, never a path.
package enum Filename {
    /// The longest name kept, in characters.
    package static let maximumLength = 255

    /// The last path component, without control characters, `/`, `\`, or leading dots;
    /// `attachment` if nothing is left.
    package static func sanitize(_ name: String) -> String {
        let lastComponent = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var cleaned = String(
            lastComponent.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        cleaned = cleaned.trimmingCharacters(in: .whitespaces)
        if cleaned.count > maximumLength { cleaned = String(cleaned.prefix(maximumLength)) }
        return cleaned.isEmpty ? "attachment" : cleaned
    }

    /// The MIME type a file name's extension suggests.
    public static func mimeType(for name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic": "image/heic"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        case "mp3": "audio/mpeg"
        case "m4a": "audio/mp4"
        case "ogg", "oga": "audio/ogg"
        case "wav": "audio/wav"
        case "txt": "text/plain"
        case "pdf": "application/pdf"
        default: "application/octet-stream"
        }
    }
}
