import Foundation
import PrefsKit

/// The daemon's drafts, attachments and threads: `/v1/drafts…` and `/v1/threads/…`. A change
/// based on a revision sends it as `If-Match`.
extension PrefsClient {
    public func drafts(account: String?, thread: String?) async throws -> [Draft] {
        let answer: DraftsAnswer = try await call("GET", "/v1/drafts", query: ["account": account, "thread": thread])
        return answer.drafts
    }

    public func draft(_ id: UUID) async throws -> Draft {
        try await call("GET", Self.path(of: id))
    }

    public func createDraft(_ input: DraftInput) async throws -> Draft {
        try await call("POST", "/v1/drafts", body: try Self.encoder.encode(input))
    }

    public func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft {
        try await call("PATCH", Self.path(of: id), body: try Self.encoder.encode(patch), headers: Self.ifMatch(ifRevision))
    }

    @discardableResult
    public func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult {
        try await call("DELETE", Self.path(of: id), headers: Self.ifMatch(ifRevision))
    }

    public func validation(of id: UUID) async throws -> DraftValidation {
        try await call("GET", Self.path(of: id) + "/validation")
    }

    public func thread(_ id: String) async throws -> [Draft] {
        let answer: DraftsAnswer = try await call("GET", "/v1/threads/\(Self.pathSegment(id))")
        return answer.drafts
    }

    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        try await addAttachment(to: draft, upload, ifRevision: ifRevision, bytes: bytes, length: nil)
    }

    /// Adds an attachment whose size may be known beforehand: with `length`, the bytes go with a
    /// `Content-Length` rather than in chunks. `bytes` is read as it is sent, never held whole.
    ///
    /// The bytes cannot be sent twice: if the answer is lost, the error is `outcome_unknown` at
    /// once. ``addAttachment(to:_:ifRevision:length:bytes:)`` sends them again.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    ///   - bytes: The attachment's bytes, in pieces.
    ///   - length: Their size in bytes, if known.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError`` — `outcome_unknown` if the answer is lost, or as
    ///   ``DraftsService/addAttachment(to:_:ifRevision:bytes:)`` does.
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>,
        length: Int64?
    ) async throws -> AttachmentResult {
        let spec = Self.uploadRequest(to: draft, upload, ifRevision: ifRevision)
        let response = try await exchange(spec, repeatable: false) { spec in
            try await transport.send(spec, body: bytes, length: length)
        }
        return try Self.decode(response, answering: spec)
    }

    /// Adds an attachment whose bytes `bytes` makes anew for each try: if the answer is lost (the
    /// daemon restarted), the upload is sent again with the same `Idempotency-Key` — so it is
    /// stored once — until the daemon answers or ``writeRetryDeadline`` passes.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file.
    ///   - ifRevision: The draft revision the change is based on, or nil to skip the check.
    ///   - length: The bytes' size, if known.
    ///   - bytes: Makes the attachment's bytes anew, for each try.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError`` — `outcome_unknown` if no answer came before the deadline, what
    ///   `bytes` throws, or as ``DraftsService/addAttachment(to:_:ifRevision:bytes:)`` does.
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, length: Int64?,
        bytes: () throws -> AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        let spec = Self.uploadRequest(to: draft, upload, ifRevision: ifRevision)
        let response = try await exchange(spec) { spec in
            try await transport.send(spec, body: try bytes(), length: length)
        }
        return try Self.decode(response, answering: spec)
    }

    /// The upload of an attachment, before its bytes.
    private static func uploadRequest(to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?) -> HTTPRequestSpec {
        let query = [("filename", upload.filename), ("kind", upload.kind?.rawValue), ("alt", upload.altText)]
        return HTTPRequestSpec(
            method: "POST", target: target(path(of: draft) + "/attachments", query: query),
            headers: [("Content-Type", upload.mimeType ?? "application/octet-stream")] + ifMatch(ifRevision))
    }

    public func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult
    {
        try await call(
            "PATCH", Self.path(of: attachment, of: draft), body: try Self.encoder.encode(patch), headers: Self.ifMatch(ifRevision))
    }

    public func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft {
        try await call("DELETE", Self.path(of: attachment, of: draft), headers: Self.ifMatch(ifRevision))
    }

    /// The download's answer carries only the bytes; the attachment's description comes from
    /// its draft, read first. (An attachment's bytes never change, so the two agree.)
    ///
    /// - Parameters:
    ///   - attachment: The attachment's ID.
    ///   - draft: Its draft's ID.
    /// - Returns: The attachment and its bytes, as they are read.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such attachment.
    public func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload {
        guard let description = try await self.draft(draft).attachments.first(where: { $0.id == attachment }) else {
            throw PrefsError(.notFound, "Draft \(draft) has no attachment \(attachment).")
        }
        let spec = HTTPRequestSpec(method: "GET", target: Self.path(of: attachment, of: draft) + "/data")
        let response = try await Self.succeeded(try await transport.stream(spec))
        return AttachmentDownload(attachment: description, bytes: response.body)
    }

    /// `/v1/drafts/{id}`.
    private static func path(of draft: UUID) -> String {
        "/v1/drafts/\(draft.uuidString)"
    }

    /// `/v1/drafts/{id}/attachments/{aid}`.
    private static func path(of attachment: UUID, of draft: UUID) -> String {
        path(of: draft) + "/attachments/\(attachment.uuidString)"
    }
}

/// The answer of `GET /v1/drafts` and `GET /v1/threads/{id}`.
private struct DraftsAnswer: Decodable {
    var drafts: [Draft]
}
