import Crypto
import Foundation
import PrefsKit

/// Blobs named by their SHA-256 (`/v1/blobs/{sha256}`): how a device pushes an attachment's bytes
/// to its upstream once, before the draft that uses them, resuming after a cut where it stopped,
/// and how it pulls them.
///
/// Each uploader (a named token; the socket's owner and the file token as one) has its own upload
/// of a blob, kept between requests: a request goes on from the bytes the upload holds
/// (`Upload-Offset`), and those that came before a connection was cut are kept. When all are in,
/// they are hashed: bytes that hash to their name become the blob — stored once, whoever sends
/// them, in the same rows as attachments' bytes — and bytes that do not are dropped. An upload
/// left alone for ``StoreConfiguration/blobUploadRetention`` is dropped; so is a blob uploaded
/// that long ago that no attachment uses.
///
/// Knowing a hash gives nothing away: a grant below `/` reads a blob only if an attachment of a
/// draft within its reach uses it, or its token uploaded it; to any other, the blob is not there,
/// and it must send all of its bytes to prove it has them.
extension PrefsEngine {
    /// Where the blob `sha256` stands for `grant`: held whole, if the grant may read it; else how
    /// many bytes of it the grant's own upload holds.
    package func blobState(_ sha256: String, grant: AccessGrant) async throws -> BlobState {
        if let size = try await storage.blobSize(sha256: sha256), try await mayRead(blob: sha256, grant: grant) {
            return .held(byteSize: size)
        }
        return .uploading(received: try await storage.blobUpload(sha256: sha256, uploader: grant.uploader)?.received ?? 0)
    }

    /// The blob `sha256`'s size and bytes, as they are read: a download that has begun delivers
    /// them whole, as ``attachmentData(_:of:)`` does.
    ///
    /// - Throws: ``PrefsError`` `not_found` if the store holds no such blob, or `grant` may not
    ///   read it (the same answer, so that a hash tells nothing).
    package func blobData(_ sha256: String, grant: AccessGrant) async throws -> (byteSize: Int64, bytes: AsyncThrowingStream<Data, any Error>) {
        guard case .held(let size) = try await blobState(sha256, grant: grant), let blob = try await storage.openBlob(sha256) else {
            throw PrefsError(.notFound, "There is no blob \(sha256).")
        }
        let download = BlobDownload(blob)
        return (size, AsyncThrowingStream { try await download.next() })
    }

    /// Takes in the bytes of the blob `sha256`, `length` bytes in all, from `offset` on — where
    /// `grant`'s upload of it stands — as they come, in chunks of ``BlobUpload/chunkLimit``,
    /// never holding more. Bytes that came before `bytes` failed (a cut connection) are kept.
    ///
    /// A blob the store holds and `grant` may read is answered at once, without reading `bytes`.
    ///
    /// - Returns: How many bytes of the blob the store holds for `grant` now: `length` once the
    ///   blob is stored.
    /// - Throws: ``PrefsError`` — `too_large` for a `length` over
    ///   ``StoreConfiguration/maximumAttachmentBytes``, `invalid_request` for bytes past
    ///   `length`, `digest_mismatch` when all are in and hash to another SHA-256 (the upload is
    ///   dropped); ``BlobOffsetConflict`` when `offset` is not where the upload stands; or
    ///   what `bytes` throws.
    package func uploadBlob(
        _ sha256: String, offset: Int64, length: Int64, grant: AccessGrant, bytes: AsyncThrowingStream<Data, any Error>
    ) async throws -> Int64 {
        let limit = configuration.maximumAttachmentBytes
        guard length <= limit else {
            throw PrefsError(.tooLarge, "The blob is \(length) bytes, over the limit of \(limit) bytes; nothing was kept.")
        }
        guard offset <= length else {
            throw PrefsError(.invalidRequest, "Upload-Offset \(offset) is past Upload-Length \(length); nothing was changed.")
        }
        let uploader = grant.uploader
        if case .held(let size) = try await blobState(sha256, grant: grant) {
            // Sent again: kept a while longer for the draft that will use it.
            try await write(WriteContext()) { batch in try batch.connection.recordBlobUploader(sha256: sha256, uploader: uploader, time: batch.time) }
            return size
        }
        // Refused before any byte is read; checked again as each chunk is stored.
        _ = try WriteBatch.startsAnew(
            offset: offset, length: length, upload: try await storage.blobUpload(sha256: sha256, uploader: uploader))
        // Hashed as the bytes are stored, if the hash so far is at hand; else read back at the end.
        let key = UploadDigests.Key(sha256: sha256, uploader: uploader)
        var digest = uploadDigests.take(key, at: offset)
        var received = offset
        var pending = Data()
        /// Stores `count` bytes of `pending` as the upload's next chunk.
        func store(_ count: Int) async throws {
            let (chunk, at) = (Data(pending.prefix(count)), received)
            try await write(WriteContext()) { batch in
                try batch.appendToBlobUpload(sha256: sha256, uploader: uploader, offset: at, length: length, chunk)
            }
            digest?.hasher.update(data: chunk)
            digest?.received += Int64(count)
            // What is left, copied: Data's removeFirst only moves its start, and its storage would
            // keep every byte appended — a whole upload's, in memory.
            pending = Data(pending.dropFirst(count))
            received += Int64(count)
        }
        do {
            for try await piece in bytes {
                let room = Int(length - received) - pending.count
                pending.append(piece.prefix(room))
                while pending.count >= BlobUpload.chunkLimit { try await store(BlobUpload.chunkLimit) }
                guard piece.count <= room else {
                    throw PrefsError(
                        .invalidRequest,
                        "The body runs past Upload-Length (\(length) bytes); the bytes up to it were kept, none past it.")
                }
            }
        } catch let error as BlobOffsetConflict {
            throw error
        } catch {
            // A cut connection, a body too long: what came is kept, to go on from.
            if !pending.isEmpty { try? await store(pending.count) }
            if let digest { uploadDigests.keep(digest, for: key) }
            throw error
        }
        if !pending.isEmpty { try await store(pending.count) }
        guard received == length else {
            if let digest { uploadDigests.keep(digest, for: key) }
            return received
        }
        let hashed = digest.map { $0.hasher.finalize().withUnsafeBytes { $0.lowercaseHex } }
        let stored = try await write(WriteContext()) { batch in
            try batch.completeBlobUpload(sha256: sha256, uploader: uploader, length: length, hashed: hashed)
        }
        guard stored == sha256 else {
            throw PrefsError(
                .digestMismatch,
                "The \(length) bytes sent as blob \(sha256) hash to \(stored); none of them was kept. Send the blob's own bytes from offset 0."
            )
        }
        return length
    }

    /// Whether `grant` may read the stored blob `sha256`: a grant at `/` reads every blob; one
    /// below it, those an attachment of a draft of an account it covers uses, and those its token
    /// uploaded.
    private func mayRead(blob sha256: String, grant: AccessGrant) async throws -> Bool {
        guard !grant.coversEverything else { return true }
        let users = try await storage.blobUsers(sha256: sha256)
        return users.uploaders.contains(grant.uploader) || users.accounts.contains(where: grant.covers(account:))
    }
}

extension AccessGrant {
    /// Whose upload a request with this grant adds to (``BlobUpload/uploader``): its named
    /// token's; `""` for the socket's owner and the file token.
    package var uploader: String { token ?? "" }
}
