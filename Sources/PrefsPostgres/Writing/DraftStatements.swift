import Foundation
import PostgresNIO
import PrefsKit

/// The SQL that writes draft and attachment rows.
enum DraftStatements {
    /// The size of each stored chunk of a blob.
    static let chunkSize = 256 * 1024

    static func insert(_ draft: Draft) -> PostgresQuery {
        """
        INSERT INTO draft (\(unescaped: PostgresRows.draftColumns))
        VALUES (\(draft.id.uuidString), \(draft.account), \(draft.thread), \(draft.position), \(draft.replyTo),
            \(draft.text), \(draft.contentWarning), \(draft.visibility.rawValue), \(draft.language), \(draft.sensitive),
            \(pollText(draft)), \(draft.createdAt.timeIntervalSince1970), \(draft.updatedAt.timeIntervalSince1970),
            \(draft.revision), \(draft.conflictOf?.uuidString), \(draft.deletedElsewhere))
        """
    }

    static func update(_ draft: Draft) -> PostgresQuery {
        """
        UPDATE draft SET account = \(draft.account), thread = \(draft.thread), position = \(draft.position),
            reply_to = \(draft.replyTo), text = \(draft.text), content_warning = \(draft.contentWarning),
            visibility = \(draft.visibility.rawValue), language = \(draft.language), sensitive = \(draft.sensitive),
            poll = \(pollText(draft)), created_at = \(draft.createdAt.timeIntervalSince1970),
            updated_at = \(draft.updatedAt.timeIntervalSince1970), revision = \(draft.revision),
            conflict_of = \(draft.conflictOf?.uuidString), deleted_elsewhere = \(draft.deletedElsewhere)
        WHERE id = \(draft.id.uuidString)
        """
    }

    static func insert(_ attachment: Attachment) -> PostgresQuery {
        """
        INSERT INTO attachment (\(unescaped: PostgresRows.attachmentColumns))
        VALUES (\(attachment.id.uuidString), \(attachment.draft.uuidString), \(attachment.position),
            \(attachment.kind.rawValue), \(attachment.mimeType), \(attachment.filename), \(attachment.byteSize),
            \(attachment.sha256), \(attachment.altText), \(attachment.width), \(attachment.height))
        """
    }

    /// The poll as the JSON text the row keeps.
    private static func pollText(_ draft: Draft) -> String? {
        draft.poll.map { String(decoding: (try? JSONEncoder().encode($0)) ?? Data(), as: UTF8.self) }
    }
}
