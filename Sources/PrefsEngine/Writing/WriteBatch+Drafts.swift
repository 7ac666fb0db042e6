import Foundation
import PrefsKit

/// Draft and attachment writes, inside the batch's transaction. Each change bumps the draft's
/// revision and records a draft event carrying the draft's account, thread, revision and
/// validity; moves keep thread positions dense, and the siblings that move get events too.
extension WriteBatch {
    /// The draft, or `not_found`.
    func existingDraft(_ id: UUID) throws -> Draft {
        guard let draft = try connection.draft(id) else {
            throw PrefsError(.notFound, "There is no draft \(id.uuidString).")
        }
        return draft
    }

    /// Creates a draft from `input`: under a new ID, or, for a draft a device made, under its
    /// own, with sync's marks (a conflicted copy of another; brought back after a delete).
    func createDraft(_ input: DraftInput, id: UUID = UUID(), conflictOf: UUID? = nil, deletedElsewhere: Bool? = nil) throws
        -> Draft
    {
        let text = input.text ?? ""
        try DraftFieldRules.check(
            account: input.account, thread: input.thread, position: input.position, language: input.language,
            text: text, contentWarning: input.contentWarning, poll: input.poll)
        try checkReplicaMayWrite(at: try Self.accountScope(input.account))
        let now = Date(timeIntervalSince1970: time)
        var draft = Draft(
            id: id, account: input.account, thread: input.thread, replyTo: input.replyTo, text: text,
            contentWarning: input.contentWarning, visibility: input.visibility ?? .public, language: input.language,
            sensitive: input.sensitive ?? false, poll: input.poll, createdAt: now, updatedAt: now, conflictOf: conflictOf,
            deletedElsewhere: deletedElsewhere)
        // A draft brought back after a delete takes up its revisions where they stopped.
        if deletedElsewhere == true, let last = try connection.draftVersion(of: id, at: nil) { draft.revision = last.revision + 1 }
        if let thread = input.thread {
            draft.position = try openPlace(in: thread, for: draft.account, at: input.position)
        }
        try connection.insertDraft(draft)
        try recordDraft(.draftCreated, draft)
        try pushDraftLater(draft.id, before: nil, after: draft)
        return draft
    }

    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) throws -> Draft {
        let old = try existingDraft(id)
        try old.checkRevision(ifRevision)
        try checkReplicaMayWrite(at: try Self.accountScope(old.account))
        var draft = old
        draft.text = patch.text.applied(to: old.text) ?? ""
        draft.replyTo = patch.replyTo.applied(to: old.replyTo)
        draft.contentWarning = patch.contentWarning.applied(to: old.contentWarning)
        draft.visibility = patch.visibility.applied(to: old.visibility) ?? .public
        draft.language = patch.language.applied(to: old.language)
        draft.sensitive = patch.sensitive.applied(to: old.sensitive) ?? false
        draft.poll = patch.poll.applied(to: old.poll)
        let newThread = patch.thread.applied(to: old.thread)
        let newPosition: Int? = if case .set(let position) = patch.position { position } else { nil }
        try DraftFieldRules.check(
            account: draft.account, thread: newThread, position: newPosition, language: draft.language,
            text: draft.text, contentWarning: draft.contentWarning, poll: draft.poll)
        let moves = newThread != old.thread || (newPosition != nil && newPosition != old.position)
        if moves {
            if let thread = old.thread, let position = old.position {
                try closePlace(in: thread, at: position, leaving: id)
            }
            draft.thread = newThread
            draft.position = try newThread.map { try openPlace(in: $0, for: draft.account, at: newPosition, moving: id) }
        }
        draft.revision += 1
        draft.updatedAt = Date(timeIntervalSince1970: time)
        try connection.updateDraft(draft)
        try recordDraft(.draftUpdated, draft, previousThread: old.thread != draft.thread ? old.thread : nil)
        try pushDraftLater(id, before: old, after: draft)
        return draft
    }

    func deleteDraft(_ id: UUID, ifRevision: Int64?) throws {
        let draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        try checkReplicaMayWrite(at: try Self.accountScope(draft.account))
        try connection.deleteDraft(draft)
        if let thread = draft.thread, let position = draft.position {
            try closePlace(in: thread, at: position, leaving: id)
        }
        var deleted = draft
        deleted.revision += 1
        try recordDraft(.draftDeleted, deleted, validity: .absent)
        try pushDraftLater(id, before: draft, after: nil)
    }

    /// Adds an attachment whose bytes are in `file` (already hashed, measured and sniffed).
    func addAttachment(
        to id: UUID, _ upload: AttachmentUpload, media: AttachmentMedia, sha256: String, byteSize: Int64, file: URL,
        ifRevision: Int64?
    ) throws -> AttachmentResult {
        try existingDraft(id).checkRevision(ifRevision)
        if !(try connection.blobExists(sha256: sha256)) {
            try connection.insertBlob(sha256: sha256, byteSize: byteSize, from: file)
        }
        let attachment = Attachment(
            id: UUID(), draft: id, position: 0, kind: media.kind, mimeType: media.mimeType,
            filename: Filename.sanitize(upload.filename), byteSize: byteSize, sha256: sha256, altText: upload.altText,
            width: media.width, height: media.height)
        return try attach(attachment, to: id)
    }

    /// Adds `attachment`, whose bytes are stored already, at the end of draft `id`'s.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` if no bytes with its hash are stored (a device
    ///   uploads them before it pushes the change that references them).
    func attach(_ attachment: Attachment, to id: UUID) throws -> AttachmentResult {
        var draft = try existingDraft(id)
        try checkReplicaMayWrite(at: try Self.accountScope(draft.account))
        guard try connection.blobExists(sha256: attachment.sha256) else {
            throw PrefsError(
                .invalidRequest,
                "No bytes with SHA-256 \(attachment.sha256) are stored here: upload them (PATCH /v1/blobs/\(attachment.sha256)) "
                    + "before the change that references them.")
        }
        let before = draft
        var attachment = attachment
        attachment.draft = id
        attachment.position = draft.attachments.count
        try connection.insertAttachment(attachment)
        draft.attachments.append(attachment)
        try bump(&draft)
        try recordDraft(.attachmentAdded, draft, attachment: attachment.id)
        try pushDraftLater(id, before: before, after: draft)
        return AttachmentResult(attachment: attachment, draft: draft)
    }

    func updateAttachment(_ attachmentID: UUID, of id: UUID, _ patch: AttachmentPatch, ifRevision: Int64?) throws
        -> AttachmentResult
    {
        var draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        try checkReplicaMayWrite(at: try Self.accountScope(draft.account))
        guard let index = draft.attachments.firstIndex(where: { $0.id == attachmentID }) else {
            throw PrefsError(.notFound, "Draft \(id.uuidString) has no attachment \(attachmentID.uuidString).")
        }
        let before = draft
        var attachment = draft.attachments.remove(at: index)
        attachment.altText = patch.altText.applied(to: attachment.altText)
        let position = patch.position.applied(to: index) ?? index
        guard (0...draft.attachments.count).contains(position) else {
            throw PrefsError(.invalidRequest, "The position \(position) is out of range 0...\(draft.attachments.count).")
        }
        draft.attachments.insert(attachment, at: position)
        try renumberAttachments(&draft)
        try connection.updateAttachment(draft.attachments[position])  // its alt text, whether it moved or not
        try bump(&draft)
        try recordDraft(.attachmentUpdated, draft, attachment: attachmentID)
        try pushDraftLater(id, before: before, after: draft)
        return AttachmentResult(attachment: draft.attachments[position], draft: draft)
    }

    func removeAttachment(_ attachmentID: UUID, of id: UUID, ifRevision: Int64?) throws -> Draft {
        var draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        try checkReplicaMayWrite(at: try Self.accountScope(draft.account))
        guard let index = draft.attachments.firstIndex(where: { $0.id == attachmentID }) else {
            throw PrefsError(.notFound, "Draft \(id.uuidString) has no attachment \(attachmentID.uuidString).")
        }
        let before = draft
        try connection.deleteAttachment(draft.attachments.remove(at: index))
        try renumberAttachments(&draft)
        try bump(&draft)
        try recordDraft(.attachmentRemoved, draft, attachment: attachmentID)
        try pushDraftLater(id, before: before, after: draft)
        return draft
    }

    // MARK: - Validation

    /// The compose rules at `scope` as this batch sees the preferences — or, with `substitute`,
    /// as they were with one key's state replaced.
    func composeRules(at scope: ScopePath, substitute: (key: String, state: KeyState?)? = nil) -> ComposeRules {
        ComposeRules { key in
            let keyState = key == substitute?.key ? substitute?.state : state(of: key)
            return PreferenceResolver.effectiveValue(at: scope, state: keyState ?? KeyState(), override: overrides[key]).value
        }
    }

    func validation(of draft: Draft) throws -> DraftValidation {
        DraftValidation(of: draft, rules: composeRules(at: try draft.scope))
    }

    /// After a change of a compose preference: a `validation` event for every draft it governs
    /// whose validation changed. Costs one pass over those drafts; compose preferences change rarely.
    func revalidateDrafts(afterChangeOf key: String, at scope: ScopePath?, before: KeyState?) throws {
        guard ComposeRules.keys.contains(key) else { return }
        for draft in try drafts(within: scope ?? .root) {
            let draftScope = try draft.scope
            let now = DraftValidation(of: draft, rules: composeRules(at: draftScope))
            let then = DraftValidation(of: draft, rules: composeRules(at: draftScope, substitute: (key, before)))
            if now.problems != then.problems {
                try recordDraft(.validation, draft, validity: .known(now.valid))
            }
        }
    }

    /// The drafts whose compose scope lies within `scope`: those a compose preference set there
    /// governs (`/accounts/A` and `/accounts/A/threads/T` are the scopes drafts have).
    private func drafts(within scope: ScopePath) throws -> [Draft] {
        let segments = scope.path.split(separator: "/").map(String.init)
        switch segments.count {
        case 0:
            return try connection.drafts(account: nil, thread: nil)
        case 1 where segments[0] == "accounts":
            return try connection.drafts(account: nil, thread: nil)
        case 2 where segments[0] == "accounts":
            return try connection.drafts(account: segments[1], thread: nil)
        case 3 where segments[0] == "accounts" && segments[2] == "threads":
            return try connection.drafts(account: segments[1], thread: nil).filter { $0.thread != nil }
        case 4 where segments[0] == "accounts" && segments[2] == "threads":
            return try connection.drafts(account: segments[1], thread: segments[3])
        default:
            return []
        }
    }

    // MARK: - Helpers

    /// The scope of `account`'s drafts: `/accounts/<account>`.
    static func accountScope(_ account: String) throws -> ScopePath {
        try ScopePath.root.appending("accounts").appending(account)
    }

    /// What a draft event says of the draft's validity (its `valid`).
    enum EventValidity: Equatable {
        /// The draft's validity as this batch sees it.
        case current
        /// A validity already worked out.
        case known(Bool)
        /// None: the draft is gone.
        case absent
    }

    /// Records a draft event, with the draft's validity as `validity` says.
    func recordDraft(
        _ kind: ChangeEvent.Kind, _ draft: Draft, attachment: UUID? = nil, previousThread: String? = nil,
        validity: EventValidity = .current
    ) throws {
        let valid: Bool? = switch validity {
        case .current: try validation(of: draft).valid
        case .known(let valid): valid
        case .absent: nil
        }
        try recordEvent(
            ChangeEvent(
                revision: 0, kind: kind, draft: draft.id.uuidString, attachment: attachment?.uuidString,
                account: draft.account, thread: draft.thread, previousThread: previousThread,
                draftRevision: draft.revision, valid: valid))
        if kind != .validation { try storeVersion(of: draft, deleted: validity == .absent) }
    }

    /// Keeps the draft as it is now (`deleted`: gone) as its version at its revision, with when
    /// each field last changed: what the batch's running request says (a device's stamps, in
    /// ``draftStamps``), or its own commit time.
    private func storeVersion(of draft: Draft, deleted: Bool) throws {
        let previous = try connection.draftVersion(of: draft.id, at: nil)
        let now = stamps(of: deleted ? nil : draft, changedSince: previous)
        try connection.storeDraftVersion(
            DraftVersion(id: draft.id, revision: draft.revision, draft: deleted ? nil : draft, stamps: now), time: time)
    }

    /// The stamps of `draft`'s fields (nil: deleted): `previous`'s, but for those that changed
    /// since it, stamped now.
    private func stamps(of draft: Draft?, changedSince previous: DraftVersion?) -> [DraftMerge.Field: SyncStamp] {
        var stamps = previous?.stamps ?? [:]
        let local = if case .device(let stamp) = context.sync { stamp } else { SyncStamp(milliseconds: Int64(time * 1000), counter: 0, device: "") }
        for field in DraftMerge.Field.changed(from: previous?.draft, to: draft) {
            stamps[field] = draftStamps[field] ?? local
        }
        return stamps
    }

    private func bump(_ draft: inout Draft) throws {
        draft.revision += 1
        draft.updatedAt = Date(timeIntervalSince1970: time)
        try connection.updateDraft(draft)
    }

    private func renumberAttachments(_ draft: inout Draft) throws {
        for index in draft.attachments.indices where draft.attachments[index].position != index {
            draft.attachments[index].position = index
            try connection.updateAttachment(draft.attachments[index])
        }
    }

    /// Makes room at `position` (default: the end) in `thread`, moving later drafts down one.
    /// Returns the position taken.
    private func openPlace(in thread: String, for account: String, at position: Int?, moving id: UUID? = nil) throws -> Int {
        let siblings = try connection.drafts(account: nil, thread: thread).filter { $0.id != id }
        if let other = siblings.first(where: { $0.account != account }) {
            throw PrefsError(.invalidRequest, "Thread '\(thread)' belongs to account '\(other.account)', not '\(account)'.")
        }
        let place = position ?? siblings.count
        guard (0...siblings.count).contains(place) else {
            throw PrefsError(
                .invalidRequest, "The position \(place) is out of range: thread '\(thread)' has places 0...\(siblings.count).")
        }
        for var sibling in siblings where (sibling.position ?? 0) >= place {
            sibling.position = (sibling.position ?? 0) + 1
            try bump(&sibling)
            try recordDraft(.draftUpdated, sibling)
        }
        return place
    }

    /// Closes the gap `leaving` leaves at `position` in `thread`, moving later drafts up one.
    private func closePlace(in thread: String, at position: Int, leaving id: UUID) throws {
        for var sibling in try connection.drafts(account: nil, thread: thread)
        where sibling.id != id && (sibling.position ?? 0) > position {
            sibling.position = (sibling.position ?? 0) - 1
            try bump(&sibling)
            try recordDraft(.draftUpdated, sibling)
        }
    }
}

extension Draft {
    /// Throws `stale_revision` with this draft unless `expected` is nil or its revision.
    func checkRevision(_ expected: Int64?) throws {
        guard let expected, expected != revision else { return }
        throw PrefsError(
            .staleRevision,
            "Draft \(id.uuidString) is at revision \(revision), not \(expected); nothing was changed. "
                + "Apply your change to the current draft and retry.",
            currentDraft: self)
    }
}
