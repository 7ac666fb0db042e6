import Foundation
import PrefsKit

/// An upstream taking in a device's pushed draft changes, inside one batch's transaction: a
/// change made on the draft as the upstream has it is applied as it is; one made on an older
/// revision is merged with what changed since (``DraftMerge``, against the draft's version the
/// device started from) — text that cannot be merged becoming a conflicted copy — and an edit
/// beats a delete. Every merge is recorded as a conflict, with both sides.
extension WriteBatch {
    /// Takes in one pushed draft change, made at `stamp`, its fields at `fieldStamps` (both
    /// clamped and naming the device). A change that cannot be applied is refused before anything
    /// is written, and kept as a conflict's loser.
    func takeIn(
        _ mutation: DraftMutation, stamped stamp: SyncStamp, fieldStamps: [DraftMerge.Field: SyncStamp], from device: String,
        reach: ScopePath
    ) throws -> SyncAnswer.DraftResult {
        let current = try connection.draft(mutation.id)
        draftStamps = fieldStamps
        defer { draftStamps = [:] }
        var mutation = mutation
        // The change as the device made it, its text whole: what the answer tells it apart from.
        let sent: DraftMutation
        do {
            try mutation.restoreText(from: connection)
            sent = mutation
            try dropAttachmentsGone(from: &mutation, over: current)
            try check(mutation, over: current, from: device, reach: reach)
        } catch let error as PrefsError {
            let conflict = try recordDraftConflict(
                mutation.id, account: current?.account ?? mutation.draft?.account, rule: .refused,
                winner: current, losers: [.init(value: try mutation.draft?.jsonValue, device: device, stamp: stamp, sequence: mutation.seq)],
                detail: error.message)
            return try draftResult(mutation, .refused, conflict: conflict)
        }
        let result = try takeIn(mutation, over: current, stamped: stamp, from: device)
        // Attachments dropped: the device is sent the draft as it is here, which lacks them.
        guard sent.draft != mutation.draft else { return result }
        return try draftResult(sent, result.outcome, copy: result.copy, conflict: result.conflict)
    }

    /// Throws what would stop `mutation` from being applied, before anything is: a draft beyond
    /// the device's reach or moved to another account, fields the rules refuse, a thread of
    /// another account's, attachments whose bytes are not stored here. (Places out of range are
    /// the nearest in range.)
    private func check(_ mutation: DraftMutation, over current: Draft?, from device: String, reach: ScopePath) throws {
        guard let account = mutation.draft?.account ?? current?.account else { return }
        let scope = try Self.accountScope(account)
        guard reach.contains(scope) else {
            throw PrefsError(.forbidden, "The device '\(device)' may write at \(reach.path) and below; \(scope.path)'s drafts are outside it.")
        }
        guard let draft = mutation.draft else { return }
        if let current, draft.account != current.account {
            throw PrefsError(.invalidRequest, "A draft stays with its account: \(current.account), not \(draft.account).")
        }
        try DraftFieldRules.check(
            account: draft.account, thread: draft.thread, position: nil, language: draft.language, text: draft.text,
            contentWarning: draft.contentWarning, poll: draft.poll)
        if let thread = draft.thread, let other = try connection.drafts(account: nil, thread: thread).first(where: { $0.account != draft.account }) {
            throw PrefsError(.invalidRequest, "Thread '\(thread)' belongs to account '\(other.account)', not '\(draft.account)'.")
        }
        for attachment in draft.attachments where !(current?.attachments.contains { $0.id == attachment.id } ?? false) {
            guard try connection.blobExists(sha256: attachment.sha256) else {
                throw PrefsError(
                    .invalidRequest,
                    "No bytes with SHA-256 \(attachment.sha256) are stored here: a device uploads them before the change that references them.")
            }
        }
    }

    /// Drops from `mutation`'s draft the attachments it had from the upstream — in the version
    /// it was made on — that the upstream's draft no longer has and whose bytes it no longer
    /// holds: those of a draft deleted here since (its bytes freed with it), which the device's
    /// edit brings back. The device did not add them, and may never have fetched their bytes;
    /// its edit is taken in without them.
    private func dropAttachmentsGone(from mutation: inout DraftMutation, over current: Draft?) throws {
        guard var draft = mutation.draft, mutation.base > 0 else { return }
        let had = Set(try connection.draftVersion(of: mutation.id, at: mutation.base)?.draft?.attachments.map(\.id) ?? [])
        let held = Set(current?.attachments.map(\.id) ?? [])
        let kept = try draft.attachments.filter { attachment in
            try held.contains(attachment.id) || !had.contains(attachment.id) || connection.blobExists(sha256: attachment.sha256)
        }
        guard kept.count < draft.attachments.count else { return }
        draft.attachments = kept.enumerated().map { position, attachment in
            var placed = attachment
            placed.position = position
            return placed
        }
        mutation.draft = draft
    }

    /// What became of `mutation`: the draft as the batch leaves it.
    func draftResult(
        _ mutation: DraftMutation, _ outcome: SyncAnswer.Result.Outcome, copy: Draft? = nil, conflict: Revision? = nil
    ) throws -> SyncAnswer.DraftResult {
        guard let stored = try connection.draft(mutation.id) else {
            let revision = try connection.draftVersion(of: mutation.id, at: nil)?.revision ?? 0
            return SyncAnswer.DraftResult(
                seq: mutation.seq, outcome: outcome, id: mutation.id, revision: revision, draft: nil, deleted: true, copy: copy,
                conflict: conflict)
        }
        let news = mutation.draft.map { stored.hasContent(of: $0) } == true ? nil : stored
        // With news, when its fields that differ from the pushed draft changed.
        var stamps: [DraftMerge.Field: SyncStamp]?
        if news != nil, let all = try connection.draftVersion(of: mutation.id, at: nil)?.stamps {
            let differing = Set(DraftMerge.Field.changed(from: mutation.draft, to: stored))
            stamps = all.filter { differing.contains($0.key) }
        }
        return SyncAnswer.DraftResult(
            seq: mutation.seq, outcome: outcome, id: mutation.id, revision: stored.revision, draft: news, stamps: stamps, copy: copy,
            conflict: conflict)
    }

    /// Takes in `mutation` over the draft as the upstream has it (`current`; nil: none).
    private func takeIn(_ mutation: DraftMutation, over current: Draft?, stamped stamp: SyncStamp, from device: String) throws
        -> SyncAnswer.DraftResult
    {
        let loser = SyncConflict.Side(value: try mutation.draft?.jsonValue, device: device, stamp: stamp, sequence: mutation.seq)
        switch (mutation.draft, current) {
        case (nil, nil):
            return try draftResult(mutation, .applied)
        case (nil, let current?):
            guard current.revision > mutation.base else {
                try deleteDraft(current.id, ifRevision: nil)
                return try draftResult(mutation, .applied)
            }
            // Edited since the device took it in: the edit wins over the delete.
            let conflict = try recordDraftConflict(
                current.id, account: current.account, rule: .editBeatsDelete, winner: current, losers: [loser],
                detail: "The draft was edited after the device deleted it: it stays.")
            return try draftResult(mutation, .resolved, conflict: conflict)
        case (let draft?, nil):
            guard mutation.base > 0 else {
                _ = try create(draft, conflictOf: draft.conflictOf, deletedElsewhere: draft.deletedElsewhere)
                if let original = draft.conflictOf {
                    // A conflicted copy the device made as it merged its own edits with the
                    // upstream's answer: recorded as the upstream records its own.
                    _ = try recordDraftConflict(
                        original, account: draft.account, rule: .conflictedCopy, winner: try connection.draft(original),
                        losers: [loser],
                        detail: "Both devices changed the same words: the device's text is the conflicted copy \(draft.id.uuidString), made as it merged its edits.")
                }
                return try draftResult(mutation, .applied)
            }
            // Deleted here after the device took it in: the device's edit brings it back.
            let deletion = try connection.draftVersion(of: draft.id, at: nil)
            _ = try create(draft, conflictOf: draft.conflictOf, deletedElsewhere: true)
            let deletedBy = deletion.flatMap { $0.stamps.values.max() }
            let conflict = try recordDraftConflict(
                draft.id, account: draft.account, rule: .editBeatsDelete, winner: try connection.draft(draft.id),
                losers: [.init(value: nil, device: deletedBy.flatMap { $0.device.isEmpty ? nil : $0.device }, stamp: deletedBy, revision: deletion?.revision)],
                detail: "The draft was deleted elsewhere while the device edited it: the edit brought it back.")
            return try draftResult(mutation, .resolved, conflict: conflict)
        case (let draft?, let current?):
            guard current.revision > mutation.base else {
                _ = try replace(current, with: draft)
                return try draftResult(mutation, .applied)
            }
            // Changed since the device took it in: merge both edits against the version the
            // device started from (none kept: its text against none, so that nothing is lost).
            let base = try connection.draftVersion(of: current.id, at: mutation.base)?.draft ?? current.withoutContent
            let upstreamStamps = try connection.draftVersion(of: current.id, at: nil)?.stamps ?? [:]
            let merge = DraftMerge(
                base: base, upstream: .init(draft: current, stamps: upstreamStamps),
                device: .init(draft: draft, stamps: draftStamps))
            let merged = try replace(current, with: merge.merged)
            var copy: Draft?
            if let text = merge.conflictedText {
                var input = DraftInput(draft)
                input.text = text
                input.thread = merged.thread
                input.position = merged.position.map { $0 + 1 }
                copy = try create(input: input, attachments: [], conflictOf: merged.id, deletedElsewhere: nil)
            }
            let contested = merge.contested.map(\.rawValue).joined(separator: ", ")
            let detail =
                if let copy {
                    "Both devices changed the same words: the device's text is the conflicted copy \(copy.id.uuidString)."
                } else if contested.isEmpty {
                    "Both devices changed the draft: every change was kept."
                } else {
                    "Both devices changed \(contested): the later change of each was kept."
                }
            let conflict = try recordDraftConflict(
                merged.id, account: merged.account, rule: copy == nil ? .draftMerge : .conflictedCopy, winner: merged,
                losers: [loser], detail: detail)
            return try draftResult(mutation, .resolved, copy: copy, conflict: conflict)
        }
    }

    /// Makes draft `id` `draft` again (nil: deletes it) — a conflict's loser restored — through
    /// the same changes a client's would make; on a replica, pushed like any.
    func restoreDraft(_ id: UUID, to draft: Draft?) throws {
        switch (try connection.draft(id), draft) {
        case (nil, nil):
            return
        case (let current?, nil):
            try deleteDraft(current.id, ifRevision: nil)
        case (nil, let draft?):
            _ = try create(draft, conflictOf: draft.conflictOf, deletedElsewhere: nil)
        case (let current?, let draft?):
            _ = try replace(current, with: draft)
        }
    }

    /// Creates `draft` as a device made it, under its ID, its attachments referencing bytes stored
    /// here.
    private func create(_ draft: Draft, conflictOf: UUID?, deletedElsewhere: Bool?) throws -> Draft {
        try create(input: DraftInput(draft), id: draft.id, attachments: draft.attachments, conflictOf: conflictOf, deletedElsewhere: deletedElsewhere)
    }

    /// Creates a draft from `input`, with `attachments` (referencing bytes stored here).
    private func create(input: DraftInput, id: UUID = UUID(), attachments: [Attachment], conflictOf: UUID?, deletedElsewhere: Bool?)
        throws -> Draft
    {
        var input = input
        if let thread = input.thread, let place = input.position {
            input.position = min(max(place, 0), try connection.drafts(account: nil, thread: thread).count)
        }
        var created = try createDraft(input, id: id, conflictOf: conflictOf, deletedElsewhere: deletedElsewhere)
        for attachment in attachments.sorted(by: { $0.position < $1.position }) {
            created = try attach(attachment, to: created.id).draft
        }
        return created
    }

    /// Makes `current` `target`, through the same changes (and checks) a client's would make:
    /// its fields, its place in a thread, its attachments removed, added and updated.
    private func replace(_ current: Draft, with target: Draft) throws -> Draft {
        var draft = current
        var patch = DraftPatch(from: current, to: target)
        if case .set(let place) = patch.position, let thread = target.thread {
            let others = try connection.drafts(account: nil, thread: thread).count { $0.id != current.id }
            patch.position = .set(min(max(place, 0), others))
        }
        if patch != DraftPatch() { draft = try updateDraft(current.id, patch, ifRevision: nil) }
        // Added before the others are removed: an attachment removed frees its bytes if nothing
        // else uses them, and one added may use the same bytes.
        let kept = Set(target.attachments.map(\.id))
        for attachment in target.attachments where !draft.attachments.contains(where: { $0.id == attachment.id }) {
            draft = try attach(attachment, to: draft.id).draft
        }
        for attachment in draft.attachments where !kept.contains(attachment.id) {
            draft = try removeAttachment(attachment.id, of: draft.id, ifRevision: nil)
        }
        for attachment in target.attachments.sorted(by: { $0.position < $1.position }) {
            guard let index = draft.attachments.firstIndex(where: { $0.id == attachment.id }) else { continue }
            let here = draft.attachments[index]
            var patch = AttachmentPatch()
            if here.altText != attachment.altText { patch.altText = attachment.altText.map { .set($0) } ?? .clear }
            let position = min(max(attachment.position, 0), draft.attachments.count - 1)
            if index != position { patch.position = .set(position) }
            guard patch != AttachmentPatch() else { continue }
            draft = try updateAttachment(attachment.id, of: draft.id, patch, ifRevision: nil).draft
        }
        return draft
    }

    /// Records a conflict of draft `id` (of `account`): its winner the draft as it stands.
    private func recordDraftConflict(
        _ id: UUID, account: String?, rule: SyncConflict.Rule, winner: Draft?, losers: [SyncConflict.Side], detail: String
    ) throws -> Revision {
        let scope = try account.map(Self.accountScope) ?? .root
        let lastStamp = try connection.draftVersion(of: id, at: nil)?.stamps.values.max()
        return try recordConflict(
            entry: SyncEntry(key: SyncConflict.draftKeyPrefix + id.uuidString, scope: scope), rule: rule,
            winner: .init(
                value: try winner?.jsonValue, device: lastStamp.flatMap { $0.device.isEmpty ? nil : $0.device }, stamp: lastStamp,
                revision: winner?.revision),
            losers: losers, detail: detail)
    }
}

extension DraftMutation {
    /// Makes the draft's text whole where the device sent it as an edit (``textEdit``) of the
    /// text of its base, as `connection` keeps it.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` if the base's version is no longer kept, or the
    ///   edit does not fit it; the draft keeps the edit's text (and says where it goes).
    mutating func restoreText(from connection: any WriteConnection) throws {
        guard let edit = textEdit else { return }
        textEdit = nil
        let base = try connection.draftVersion(of: id, at: base)?.draft?.text
        do {
            guard let base else {
                throw PrefsError(.invalidRequest, "The draft's text came as an edit of revision \(self.base), which is no longer kept.")
            }
            draft?.text = try edit.applied(to: base)
        } catch let error as PrefsError {
            draft?.text = edit.insert
            throw PrefsError(
                .invalidRequest, "\(error.message) Its text here is what the edit put in at \(edit.at), removing \(edit.delete) characters.")
        }
    }
}

extension Draft {
    /// The draft as a JSON value: a conflict's side.
    var jsonValue: JSONValue {
        get throws { try JSONValue(parsing: WireJSON.encoder().encode(self)) }
    }

    /// Whether `other` holds what this draft holds — its fields, text and attachments — whatever
    /// their revisions and times.
    func hasContent(of other: Draft) -> Bool {
        var other = other
        other.revision = revision
        other.createdAt = createdAt
        other.updatedAt = updatedAt
        return self == other
    }

    /// The draft with no text and no attachments: the base of a merge whose true base is no longer
    /// kept, so that each side's text is kept whole (merged where equal, else as a conflicted
    /// copy) and each side's attachments too.
    var withoutContent: Draft {
        var draft = self
        draft.text = ""
        draft.attachments = []
        return draft
    }
}

extension DraftInput {
    /// What creating `draft` again takes.
    init(_ draft: Draft) {
        self.init(
            account: draft.account, text: draft.text, thread: draft.thread, position: draft.position, replyTo: draft.replyTo,
            contentWarning: draft.contentWarning, visibility: draft.visibility, language: draft.language,
            sensitive: draft.sensitive, poll: draft.poll)
    }
}

extension DraftPatch {
    /// The patch that makes `current`'s fields `target`'s; its place in its thread too (a place
    /// past the thread's end is its end).
    init(from current: Draft, to target: Draft) {
        self.init()
        func change<Value: Sendable & Hashable>(_ old: Value?, _ new: Value?) -> FieldChange<Value> {
            guard old != new else { return .unchanged }
            return new.map { .set($0) } ?? .clear
        }
        text = change(current.text, target.text)
        replyTo = change(current.replyTo, target.replyTo)
        contentWarning = change(current.contentWarning, target.contentWarning)
        visibility = change(current.visibility, target.visibility)
        language = change(current.language, target.language)
        sensitive = change(current.sensitive, target.sensitive)
        poll = change(current.poll, target.poll)
        thread = change(current.thread, target.thread)
        if target.thread != nil, target.thread != current.thread || target.position != current.position {
            position = target.position.map { .set($0) } ?? .unchanged
        }
    }
}
