import Foundation
import PrefsKit

/// A draft as it was at one of its revisions, with when each of its fields last changed: what an
/// upstream keeps to merge a device's change made on that revision (its base), and to decide by
/// stamp a field both sides changed. A deleted draft's last version has no draft.
package struct DraftVersion: Codable, Sendable, Hashable {
    /// The draft's ID.
    package var id: UUID
    /// The draft's revision.
    package var revision: Int64
    /// The draft; nil: deleted at this revision.
    package var draft: Draft?
    /// When each field last changed, as of this revision: a device's stamp, or, for a change made
    /// at this store, its commit time (device empty).
    package var stamps: [DraftMerge.Field: SyncStamp]
    /// How long versions are kept, in seconds: a device offline longer merges its change against
    /// none (its text, where it differs, becomes a conflicted copy). Each draft's latest stays.
    package static let retention: Double = 30 * 24 * 3600

    /// A version.
    package init(id: UUID, revision: Int64, draft: Draft?, stamps: [DraftMerge.Field: SyncStamp]) {
        self.id = id
        self.revision = revision
        self.draft = draft
        self.stamps = stamps
    }
}

/// What a replica last took in from its upstream of a draft: the base its next change of the
/// draft is pushed on.
package struct DraftBase: Sendable, Hashable {
    /// The draft's revision at the upstream.
    package var revision: Int64
    /// The draft as the upstream had it; nil: deleted there.
    package var draft: Draft?

    /// A base.
    package init(revision: Int64, draft: Draft?) {
        self.revision = revision
        self.draft = draft
    }
}

extension DraftMerge.Field {
    /// The fields whose values differ between `old` and `new` (nil: no draft).
    static func changed(from old: Draft?, to new: Draft?) -> [DraftMerge.Field] {
        guard let old, let new else { return old == nil && new == nil ? [] : allCases }
        var fields: [DraftMerge.Field] = []
        if old.text != new.text { fields.append(.text) }
        if old.contentWarning != new.contentWarning { fields.append(.contentWarning) }
        if old.visibility != new.visibility { fields.append(.visibility) }
        if old.language != new.language { fields.append(.language) }
        if old.sensitive != new.sensitive { fields.append(.sensitive) }
        if old.replyTo != new.replyTo { fields.append(.replyTo) }
        if old.poll != new.poll { fields.append(.poll) }
        if old.thread != new.thread { fields.append(.thread) }
        if old.position != new.position { fields.append(.position) }
        if old.attachments != new.attachments { fields.append(.attachments) }
        return fields
    }
}
