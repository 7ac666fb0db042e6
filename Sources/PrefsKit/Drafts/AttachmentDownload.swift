import Foundation

/// An attachment's description and its bytes, as they are read.
public struct AttachmentDownload: Sendable {
    /// The attachment the bytes are of.
    public var attachment: Attachment
    /// Its bytes, in pieces, as they are read.
    public var bytes: AsyncThrowingStream<Data, any Error>

    /// A download of `attachment` from `bytes`.
    ///
    /// - Parameters:
    ///   - attachment: The attachment the bytes are of.
    ///   - bytes: Its bytes, in pieces, as they are read.
    public init(attachment: Attachment, bytes: AsyncThrowingStream<Data, any Error>) {
        self.attachment = attachment
        self.bytes = bytes
    }
}
