import Crypto
import Foundation
import PrefsKit

extension PrefsEngine {
    public func drafts(account: String?, thread: String?) async throws -> [Draft] {
        try await storage.drafts(account: account, thread: thread)
    }

    public func draft(_ id: UUID) async throws -> Draft {
        guard let draft = try await storage.draft(id) else {
            throw PrefsError(.notFound, "There is no draft \(id.uuidString).")
        }
        return draft
    }

    package func createDraft(_ input: DraftInput, context: WriteContext) async throws -> Draft {
        try await write(context) { batch in try batch.createDraft(input) }
    }

    package func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?, context: WriteContext) async throws -> Draft {
        try await write(context) { batch in try batch.updateDraft(id, patch, ifRevision: ifRevision) }
    }

    @discardableResult
    package func deleteDraft(_ id: UUID, ifRevision: Int64?, context: WriteContext) async throws -> WriteResult {
        try await write(context) { batch in
            try batch.deleteDraft(id, ifRevision: ifRevision)
            return WriteResult(revision: batch.revision)
        }
    }

    public func validation(of id: UUID) async throws -> DraftValidation {
        let draft = try await draft(id)
        let scope = try draft.scope
        let rules = ComposeRules { key in
            let resolved = resolveNow(KeyName(checked: key), scope: scope)
            return resolved.isSet ? resolved.value : nil
        }
        return DraftValidation(of: draft, rules: rules)
    }

    public func thread(_ id: String) async throws -> [Draft] {
        let drafts = try await drafts(account: nil, thread: id)
        guard !drafts.isEmpty else { throw PrefsError(.notFound, "There is no thread '\(id)'.") }
        return drafts
    }

    package func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>,
        context: WriteContext
    ) async throws -> AttachmentResult {
        // Before reading any bytes: an unknown draft or a stale revision is refused at once
        // (the write checks the revision again, for a change made during the upload). An
        // idempotent request's refusal goes through the writer, which stores it as the request's
        // outcome — or answers the outcome an earlier run of it stored.
        do {
            try await self.draft(draft).checkRevision(ifRevision)
        } catch let refusal as PrefsError where context.idempotency != nil {
            return try await write(context) { _ -> AttachmentResult in throw refusal }
        }
        let staged = try await stage(bytes, of: upload)
        defer { try? FileManager.default.removeItem(at: staged.file) }
        return try await write(context) { batch in
            try batch.addAttachment(
                to: draft, upload, media: staged.media, sha256: staged.sha256, byteSize: staged.byteSize,
                file: staged.file, ifRevision: ifRevision)
        }
    }

    package func updateAttachment(
        _ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?, context: WriteContext
    ) async throws -> AttachmentResult {
        try await write(context) { batch in try batch.updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision) }
    }

    package func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?, context: WriteContext)
        async throws -> Draft
    {
        try await write(context) { batch in try batch.removeAttachment(attachment, of: draft, ifRevision: ifRevision) }
    }

    /// The attachment and its bytes, which the download holds until it ends
    /// (``PrefsStorage/openBlob(_:)``): a download that has begun delivers them whole, even if the
    /// attachment is removed or its draft deleted meanwhile; the bytes are freed after it if
    /// nothing else uses them.
    ///
    /// On a replica, the bytes of an attachment another device added are fetched from the
    /// upstream the first time it is read here, then read like any.
    ///
    /// - Parameters:
    ///   - attachment: The attachment's ID.
    ///   - draft: Its draft's ID.
    /// - Returns: The attachment and its bytes, as they are read.
    /// - Throws: ``PrefsError`` — `not_found` if there is no such attachment; on a replica,
    ///   `unreachable` if its bytes are still to fetch and the upstream cannot be reached.
    public func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload {
        let found = try await self.draft(draft).attachments.first { $0.id == attachment }
        let missing = PrefsError(.notFound, "Draft \(draft.uuidString) has no attachment \(attachment.uuidString).")
        guard let found else { throw missing }
        var blob = try await storage.openBlob(found.sha256)
        // On a replica, another device's attachment is fetched from the upstream when first read.
        if blob == nil { blob = try await fetchBlob(of: found) }
        guard let blob else { throw missing }
        let download = BlobDownload(blob)
        return AttachmentDownload(attachment: found, bytes: AsyncThrowingStream { try await download.next() })
    }

    /// An upload written to a file beside the database, hashed and measured on the way: nothing
    /// reaches the database until it is complete and within the limit, and an upload that fails
    /// or is abandoned leaves nothing behind. What it is (``AttachmentMedia``) is decided from its
    /// first ``ImageHeader/prefixLength`` bytes, kept aside as they pass: an upload whose bytes
    /// contradict its type is refused then, before the rest is read.
    private func stage(_ bytes: AsyncThrowingStream<Data, any Error>, of upload: AttachmentUpload) async throws
        -> (file: URL, sha256: String, byteSize: Int64, media: AttachmentMedia)
    {
        let file = try newStagingFile()
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            var hasher = SHA256()
            var byteSize: Int64 = 0
            var prefix = Data()
            var media: AttachmentMedia?
            let limit = configuration.maximumAttachmentBytes
            for try await chunk in bytes {
                byteSize += Int64(chunk.count)
                guard byteSize <= limit else {
                    throw PrefsError(.tooLarge, "The attachment is over the limit of \(limit) bytes; nothing was kept.")
                }
                if media == nil {
                    prefix.append(chunk.prefix(ImageHeader.prefixLength - prefix.count))
                    if prefix.count == ImageHeader.prefixLength {
                        media = try AttachmentMedia(upload, header: ImageHeader(sniffing: prefix))
                        prefix = Data()
                    }
                }
                hasher.update(data: chunk)
                try handle.write(contentsOf: chunk)
            }
            let sha256 = hasher.finalize().withUnsafeBytes { $0.lowercaseHex }
            return (file, sha256, byteSize, try media ?? AttachmentMedia(upload, header: ImageHeader(sniffing: prefix)))
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw StagingErrors.translate(error)
        }
    }

    /// A new empty file in the storage's staging folder, which bytes on their way in are written
    /// to before they are stored; whoever makes it removes it.
    func newStagingFile() throws -> URL {
        let folder = storage.stagingFolder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appending(path: UUID().uuidString)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw PrefsError(.storageFull, "Cannot create a file in \(folder.path).")
        }
        return file
    }
}
