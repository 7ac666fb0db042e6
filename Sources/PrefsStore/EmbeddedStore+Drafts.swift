import Crypto
import Foundation
import GRDB
import PrefsKit

extension EmbeddedStore {
    public func drafts(account: String?, thread: String?) async throws -> [Draft] {
        try await pool.read { db in try DraftRecords.fetchAll(db, account: account, thread: thread) }
    }

    public func draft(_ id: UUID) async throws -> Draft {
        guard let draft = try await pool.read({ db in try DraftRecords.fetch(db, id: id) }) else {
            throw PrefsError(.notFound, "There is no draft \(id.uuidString).")
        }
        return draft
    }

    public func createDraft(_ input: DraftInput) async throws -> Draft {
        try await write { context in try context.createDraft(input) }
    }

    public func updateDraft(_ id: UUID, _ patch: DraftPatch, ifRevision: Int64?) async throws -> Draft {
        try await write { context in try context.updateDraft(id, patch, ifRevision: ifRevision) }
    }

    @discardableResult
    public func deleteDraft(_ id: UUID, ifRevision: Int64?) async throws -> WriteResult {
        try await write { context in
            try context.deleteDraft(id, ifRevision: ifRevision)
            return WriteResult(revision: context.revision)
        }
    }

    public func validation(of id: UUID) async throws -> DraftValidation {
        let draft = try await draft(id)
        let scope = try draft.scope
        let rules = ComposeRules { key in
            let resolved = resolveNow(key, scope: scope)
            return resolved.isSet ? resolved.value : nil
        }
        return DraftValidation(of: draft, rules: rules)
    }

    public func thread(_ id: String) async throws -> [Draft] {
        let drafts = try await drafts(account: nil, thread: id)
        guard !drafts.isEmpty else { throw PrefsError(.notFound, "There is no thread '\(id)'.") }
        return drafts
    }

    public func addAttachment(
        to draft: UUID, _ upload: AttachmentUpload, ifRevision: Int64?, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> AttachmentResult {
        // Before reading any bytes: an unknown draft or a stale revision is refused at once
        // (the write checks the revision again, for a change made during the upload).
        try await self.draft(draft).checkRevision(ifRevision)
        let staged = try await stage(bytes, of: upload)
        defer { try? FileManager.default.removeItem(at: staged.file) }
        return try await write { context in
            try context.addAttachment(
                to: draft, upload, media: staged.media, sha256: staged.sha256, byteSize: staged.byteSize,
                file: staged.file, ifRevision: ifRevision)
        }
    }

    public func updateAttachment(_ attachment: UUID, of draft: UUID, _ patch: AttachmentPatch, ifRevision: Int64?)
        async throws -> AttachmentResult
    {
        try await write { context in try context.updateAttachment(attachment, of: draft, patch, ifRevision: ifRevision) }
    }

    public func removeAttachment(_ attachment: UUID, of draft: UUID, ifRevision: Int64?) async throws -> Draft {
        try await write { context in try context.removeAttachment(attachment, of: draft, ifRevision: ifRevision) }
    }

    /// The attachment and its bytes, which the download holds until it ends (``BlobHolds``): a
    /// download that has begun delivers them whole, even if the attachment is removed or its draft
    /// deleted meanwhile; the bytes are freed after it if nothing else uses them.
    public func attachmentData(_ attachment: UUID, of draft: UUID) async throws -> AttachmentDownload {
        // Found and held in one request of the writer: a removal committed before it is seen, and
        // one after it finds the hold.
        let (found, chunkCount, hold) = try await write { [blobHolds] context in
            guard let found = try context.existingDraft(draft).attachments.first(where: { $0.id == attachment }) else {
                throw PrefsError(.notFound, "Draft \(draft.uuidString) has no attachment \(attachment.uuidString).")
            }
            let chunkCount = try DraftRecords.chunkCount(context.db, sha256: found.sha256) ?? 0
            let hold = BlobHold(found.sha256, in: blobHolds) { [weak self] sha256 in
                _ = try? await self?.write { context in try context.freeBlobIfUnused(sha256) }
            }
            return (found, chunkCount, hold)
        }
        let reader = BlobReader(pool: pool, attachment: found, chunkCount: chunkCount, hold: hold)
        return AttachmentDownload(attachment: found, bytes: AsyncThrowingStream { try await reader.next() })
    }

    /// An upload written to a file beside the database, hashed and measured on the way: nothing
    /// reaches the database until it is complete and within the limit, and an upload that fails
    /// or is abandoned leaves nothing behind. What it is (``AttachmentMedia``) is decided from its
    /// first ``ImageHeader/prefixLength`` bytes, kept aside as they pass: an upload whose bytes
    /// contradict its type is refused then, before the rest is read.
    private func stage(_ bytes: AsyncThrowingStream<Data, any Error>, of upload: AttachmentUpload) async throws
        -> (file: URL, sha256: String, byteSize: Int64, media: AttachmentMedia)
    {
        let folder = uploadsFolder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appending(path: UUID().uuidString)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw PrefsError(.storageFull, "Cannot create an upload file in \(folder.path).")
        }
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
            let sha256 = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            return (file, sha256, byteSize, try media ?? AttachmentMedia(upload, header: ImageHeader(sniffing: prefix)))
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw StoreErrors.translateFileError(error)
        }
    }
}

/// Reads an attachment's bytes one chunk at a time, only when the consumer asks for the next: a
/// slow reader (a download over a socket) holds one chunk in memory, not the whole file. Its
/// ``BlobHold`` keeps the bytes until the last chunk is read, or the reader is dropped.
private actor BlobReader {
    private let pool: DatabasePool
    private let attachment: Attachment
    private let chunkCount: Int
    private let hold: BlobHold
    private var number = 0

    init(pool: DatabasePool, attachment: Attachment, chunkCount: Int, hold: BlobHold) {
        self.pool = pool
        self.attachment = attachment
        self.chunkCount = chunkCount
        self.hold = hold
    }

    /// The next chunk; nil after the last, once the hold is released.
    func next() async throws -> Data? {
        guard number < chunkCount else {
            await hold.release()
            return nil
        }
        let sha256 = attachment.sha256
        let number = number
        guard let chunk = try await pool.read({ db in try DraftRecords.chunk(db, sha256: sha256, number: number) }) else {
            throw PrefsError(.notFound, "The attachment \(attachment.id.uuidString) was removed while it was read.")
        }
        self.number += 1
        return chunk
    }
}
