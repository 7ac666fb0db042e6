import Foundation

/// An attachment as changed, and its draft after the change.
public struct AttachmentResult: Codable, Sendable, Hashable {
    public var attachment: Attachment
    public var draft: Draft

    public init(attachment: Attachment, draft: Draft) {
        self.attachment = attachment
        self.draft = draft
    }
}
