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

    func createDraft(_ input: DraftInput) throws -> Draft {
        let text = input.text ?? ""
        try DraftFieldRules.check(
            account: input.account, thread: input.thread, position: input.position, language: input.language,
            text: text, contentWarning: input.contentWarning, poll: input.poll)
        let now = Date(timeIntervalSince1970: time)
        var draft = Draft(
            id: UUID(), account: input.account, thread: input.thread, replyTo: input.replyTo, text: text,
            contentWarning: input.contentWarning, visibility: input.visibility ?? .public, language: input.language,
            sensitive: input.sensitive ?? false, poll: input.poll, createdAt: now, updatedAt: now)
        if let thread = input.thread {
            draft.position = try openPlace(in: thread, for: draft.account, at: input.position)
        }
        try connection.insertDraft(draft)
        try recordDraft(.draftCreated, draft)
        return draft
    }

    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) throws -> Draft {
        let old = try existingDraft(id)
        try old.checkRevision(ifRevision)
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
        return draft
    }

    func deleteDraft(_ id: UUID, ifRevision: Int64?) throws {
        let draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        try connection.deleteDraft(draft)
        if let thread = draft.thread, let position = draft.position {
            try closePlace(in: thread, at: position, leaving: id)
        }
        var deleted = draft
        deleted.revision += 1
        try recordDraft(.draftDeleted, deleted, validity: .absent)
    }

    /// Adds an attachment whose bytes are in `file` (already hashed, measured and sniffed).
    func addAttachment(
        to id: UUID, _ upload: AttachmentUpload, media: AttachmentMedia, sha256: String, byteSize: Int64, file: URL,
        ifRevision: Int64?
    ) throws -> AttachmentResult {
        var draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        if !(try connection.blobExists(sha256: sha256)) {
            try connection.insertBlob(sha256: sha256, byteSize: byteSize, from: file)
        }
        let attachment = Attachment(
            id: UUID(), draft: id, position: draft.attachments.count, kind: media.kind, mimeType: media.mimeType,
            filename: Filename.sanitize(upload.filename), byteSize: byteSize, sha256: sha256, altText: upload.altText,
            width: media.width, height: media.height)
        try connection.insertAttachment(attachment)
        draft.attachments.append(attachment)
        try bump(&draft)
        try recordDraft(.attachmentAdded, draft, attachment: attachment.id)
        return AttachmentResult(attachment: attachment, draft: draft)
    }

    func updateAttachment(_ attachmentID: UUID, of id: UUID, _ patch: AttachmentPatch, ifRevision: Int64?) throws
        -> AttachmentResult
    {
        var draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        guard let index = draft.attachments.firstIndex(where: { $0.id == attachmentID }) else {
            throw PrefsError(.notFound, "Draft \(id.uuidString) has no attachment \(attachmentID.uuidString).")
        }
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
        return AttachmentResult(attachment: draft.attachments[position], draft: draft)
    }

    func removeAttachment(_ attachmentID: UUID, of id: UUID, ifRevision: Int64?) throws -> Draft {
        var draft = try existingDraft(id)
        try draft.checkRevision(ifRevision)
        guard let index = draft.attachments.firstIndex(where: { $0.id == attachmentID }) else {
            throw PrefsError(.notFound, "Draft \(id.uuidString) has no attachment \(attachmentID.uuidString).")
        }
        try connection.deleteAttachment(draft.attachments.remove(at: index))
        try renumberAttachments(&draft)
        try bump(&draft)
        try recordDraft(.attachmentRemoved, draft, attachment: attachmentID)
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

    /// What a draft event says of the draft's validity (its `valid`).
    private enum EventValidity {
        /// The draft's validity as this batch sees it.
        case current
        /// A validity already worked out.
        case known(Bool)
        /// None: the draft is gone.
        case absent
    }

    /// Records a draft event, with the draft's validity as `validity` says.
    private func recordDraft(
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
