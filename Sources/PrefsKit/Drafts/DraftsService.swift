import Foundation

/// Drafts, their attachments and threads: the half of ``PrefsService`` that keeps users' posts.
///
/// Updates take the draft revision they were based on (`ifRevision`, HTTP `If-Match`); a stale
/// one is refused with `stale_revision` and changes nothing. `nil` skips the check.
public protocol DraftsService: Sendable {
    /// Drafts, optionally of one account and/or one thread, by account, thread, position, creation.
    ///
    /// - Parameters:
    ///   - account: Only this account's drafts, or nil for every account's.
    ///   - thread: Only this thread's drafts, or nil for every thread's.
    /// - Returns: The drafts, sorted by account, thread, position and creation.
    /// - Throws: ``PrefsError`` when the service cannot answer.
    func drafts(account: String?, thread: String?) async throws -> [Draft]

    /// One draft with its attachments.
    ///
    /// - Parameter id: The draft's ID.
    /// - Returns: The draft, with its attachments.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such draft.
    func draft(_ id: UUID) async throws -> Draft

    /// Creates a draft (at the end of its thread unless a position is given).
    ///
    /// - Parameter input: The new draft's fields.
    /// - Returns: The draft as stored, with its ID and revision.
    /// - Throws: ``PrefsError`` — `invalid_request` for a thread of another account or a position
    ///   out of range.
    func createDraft(_ input: DraftInput) async throws -> Draft

    /// Changes a draft's fields; moving it in or between threads keeps positions dense.
    ///
    /// - Parameters:
    ///   - id: The draft's ID.
    ///   - patch: The fields to change; the others stay.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    /// - Returns: The draft as changed.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such draft, `stale_revision` (with
    ///   ``PrefsError/currentDraft``) when it is no longer at `ifRevision`.
    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft

    /// Deletes a draft and its attachments (their bytes too, where nothing else uses them).
    ///
    /// - Parameters:
    ///   - id: The draft's ID.
    ///   - ifRevision: The draft revision the deletion is based on, or nil to skip the check.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such draft, `stale_revision` when it
    ///   is no longer at `ifRevision`.
    @discardableResult
    func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult

    /// Whether the draft can be published, against compose preferences at its scope.
    ///
    /// - Parameter id: The draft's ID.
    /// - Returns: The draft's problems, if any, and the revision they are of.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such draft.
    func validation(of id: UUID) async throws -> DraftValidation

    /// The drafts of a thread, in order.
    ///
    /// - Parameter id: The thread's ID.
    /// - Returns: Its drafts, by position.
    /// - Throws: ``PrefsError`` — `not_found` if the thread has no drafts.
    func thread(_ id: String) async throws -> [Draft]

    /// Adds an attachment, streaming its bytes in. What it is (type, kind, size in pixels) is
    /// decided from the upload and its first bytes (`AttachmentMedia`). A refused upload keeps
    /// nothing.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file: its name, and optionally its kind, type
    ///     and alt text.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    ///   - bytes: The attachment's bytes, in pieces.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such draft, `stale_revision` when it
    ///   is no longer at `ifRevision`, `too_large` over the size limit, `invalid_request` when the
    ///   bytes or kind contradict the type.
    func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult

    /// Changes an attachment's alt text or position.
    ///
    /// - Parameters:
    ///   - attachment: The attachment's ID.
    ///   - draft: Its draft's ID.
    ///   - patch: The fields to change; the others stay.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    /// - Returns: The attachment as changed, and its draft after the change.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such attachment, `stale_revision`
    ///   when the draft is no longer at `ifRevision`.
    func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult

    /// Removes an attachment.
    ///
    /// - Parameters:
    ///   - attachment: The attachment's ID.
    ///   - draft: Its draft's ID.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    /// - Returns: The draft after the change.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such attachment, `stale_revision`
    ///   when the draft is no longer at `ifRevision`.
    func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft

    /// An attachment's bytes, streamed out.
    ///
    /// - Parameters:
    ///   - attachment: The attachment's ID.
    ///   - draft: Its draft's ID.
    /// - Returns: The attachment and its bytes, as they are read.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such attachment.
    func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload
}
