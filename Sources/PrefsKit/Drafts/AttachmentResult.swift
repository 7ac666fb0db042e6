import Foundation

/// An attachment as changed, and its draft after the change.
public struct AttachmentResult: Codable, Sendable, Hashable {
    /// The attachment as it is now.
    public var attachment: Attachment
    /// Its draft as it is now, with the raised revision.
    public var draft: Draft

    /// An attachment and its draft.
    ///
    /// - Parameters:
    ///   - attachment: The attachment as it is now.
    ///   - draft: Its draft as it is now.
    public init(attachment: Attachment, draft: Draft) {
        self.attachment = attachment
        self.draft = draft
    }
}
