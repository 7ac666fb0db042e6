import Foundation

/// Adding an attachment from what an app has at hand: bytes in memory, or a file.
extension DraftsService {
    /// Adds an attachment whose bytes are streamed in from `bytes` (see
    /// ``addAttachment(to:_:ifRevision:bytes:)``), without checking the draft's revision.
    @discardableResult
    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        try await addAttachment(to: draft, upload, ifRevision: nil, bytes: bytes)
    }

    /// Adds an attachment whose bytes are in memory.
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
    /// in memory. `upload` says what it is; by default, only its name (the file's), so its type
    /// comes from its bytes and name. `not_found` if the file cannot be read.
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
