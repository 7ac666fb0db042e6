import Foundation

/// What uploading an attachment says about the file (`POST …/attachments?filename=&kind=&alt=`).
public struct AttachmentUpload: Sendable, Hashable {
    /// The name the client gave; sanitised before it is stored.
    public var filename: String
    /// The kind; the MIME type's when absent.
    public var kind: Attachment.Kind?
    /// The MIME type; when absent, the image format the bytes show, else guessed from the file
    /// name (see `AttachmentMedia`).
    public var mimeType: String?
    /// A description for people who cannot see the media.
    public var altText: String?

    /// What to say about an upload: its name at least.
    ///
    /// - Parameters:
    ///   - filename: The file's name; sanitised before it is stored.
    ///   - kind: The kind of media; nil for the MIME type's.
    ///   - mimeType: The MIME type; nil to take it from the bytes or the file name.
    ///   - altText: A description for people who cannot see the media.
    public init(filename: String, kind: Attachment.Kind? = nil, mimeType: String? = nil, altText: String? = nil) {
        self.filename = filename
        self.kind = kind
        self.mimeType = mimeType
        self.altText = altText
    }
}
