import Foundation

/// Drafts, their attachments and threads: the half of ``PrefsService`` that keeps users' posts.
///
/// Updates take the draft revision they were based on (`ifRevision`, HTTP `If-Match`); a stale
/// one is refused with `stale_revision` and changes nothing. `nil` skips the check.
public protocol DraftsService: Sendable {
    /// Drafts, optionally of one account and/or one thread, by account, thread, position, creation.
    func drafts(account: String?, thread: String?) async throws -> [Draft]

    /// One draft with its attachments; `not_found` if there is none.
    func draft(_ id: UUID) async throws -> Draft

    /// Creates a draft (at the end of its thread unless a position is given).
    func createDraft(_ input: DraftInput) async throws -> Draft

    /// Changes a draft's fields; moving it in or between threads keeps positions dense.
    func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft

    /// Deletes a draft and its attachments (their bytes too, where nothing else uses them).
    @discardableResult
    func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult

    /// Whether the draft can be published, against compose preferences at its scope.
    func validation(of id: UUID) async throws -> DraftValidation

    /// The drafts of a thread, in order; `not_found` if it has none.
    func thread(_ id: String) async throws -> [Draft]

    /// Adds an attachment, streaming its bytes in. What it is (type, kind, size in pixels) is
    /// decided from the upload and its first bytes (`AttachmentMedia`). Refused, with nothing
    /// kept: with `too_large` over the size limit, with `invalid_request` when its bytes or kind
    /// contradict its type.
    func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult

    /// Changes an attachment's alt text or position.
    func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult

    /// Removes an attachment.
    func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft

    /// An attachment's bytes, streamed out.
    func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload
}
