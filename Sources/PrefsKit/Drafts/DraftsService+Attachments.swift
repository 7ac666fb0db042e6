import Foundation

/// Adding an attachment from what an app has at hand: bytes in memory, or a file.
extension DraftsService {
    /// Adds an attachment whose bytes are streamed in from `bytes` (see
    /// ``addAttachment(to:_:ifRevision:bytes:)``), without checking the draft's revision.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file.
    ///   - bytes: The attachment's bytes, in pieces.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError``, as ``addAttachment(to:_:ifRevision:bytes:)`` does.
    @discardableResult
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        try await addAttachment(to: draft, upload, ifRevision: nil, bytes: bytes)
    }

    /// Adds an attachment whose bytes are in memory.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file.
    ///   - data: The attachment's bytes.
    ///   - ifRevision: The draft revision the change is based on; nil (the default) skips the
    ///     check.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError``, as ``addAttachment(to:_:ifRevision:bytes:)`` does.
    @discardableResult
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, data: Data, ifRevision: Int64? = nil
    ) async throws -> AttachmentResult {
        let bytes = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(data)
            continuation.finish()
        }
        return try await addAttachment(to: draft, upload, ifRevision: ifRevision, bytes: bytes)
    }

    /// Adds the file at `file` as an attachment, streamed in 256 KiB pieces — never held whole
    /// in memory.
    ///
    /// - Parameters:
    ///   - draft: The draft's ID.
    ///   - upload: What the upload says about the file; by default, only its name (the file's),
    ///     so its type comes from its bytes and name.
    ///   - file: The file to attach.
    ///   - ifRevision: The draft revision the change is based on; nil (the default) skips the
    ///     check.
    /// - Returns: The new attachment, and its draft after the change.
    /// - Throws: ``PrefsError`` — `not_found` if the file cannot be read, or as
    ///   ``addAttachment(to:_:ifRevision:bytes:)`` does.
    @discardableResult
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload? = nil, contentsOf file: URL, ifRevision: Int64? = nil
    ) async throws -> AttachmentResult {
        let source = try FileUpload(path: file.path)
        return try await addAttachment(
            to: draft, upload ?? AttachmentUpload(filename: file.lastPathComponent), ifRevision: ifRevision,
            bytes: source.bytes())
    }
}
