import Foundation

/// An attachment's description and its bytes, as they are read.
public struct AttachmentDownload: Sendable {
    public var attachment: Attachment
    public var bytes: AsyncThrowingStream<Data, any Error>

    public init(attachment: Attachment, bytes: AsyncThrowingStream<Data, any Error>) {
        self.attachment = attachment
        self.bytes = bytes
    }
}
