import Crypto
import Foundation
import PrefsKit

/// A blob upload's steps in a batch's transaction (``PrefsEngine/uploadBlob(_:offset:length:grant:bytes:)``):
/// each checks where the upload stands as the transaction sees it, so that two requests adding to
/// the same upload at once never both succeed.
extension WriteBatch {
    /// Appends `data` to `uploader`'s upload of the blob `sha256`, `length` bytes long, at
    /// `offset` — starting the upload if `offset` is 0 and none of that length is under way.
    ///
    /// - Throws: ``BlobOffsetConflict`` if the upload does not hold exactly `offset` bytes.
    func appendToBlobUpload(sha256: String, uploader: String, offset: Int64, length: Int64, _ data: Data) throws {
        let upload = try connection.blobUpload(sha256: sha256, uploader: uploader)
        if try Self.startsAnew(offset: offset, length: length, upload: upload) {
            try connection.startBlobUpload(
                BlobUpload(sha256: sha256, uploader: uploader, byteSize: length, received: 0, chunkCount: 0, updatedAt: time))
        }
        try connection.appendToBlobUpload(sha256: sha256, uploader: uploader, data, time: time)
    }

    /// Whether an upload at `offset` of a blob `length` bytes long starts anew, given the
    /// uploader's `upload` under way: it does at offset 0 when none of that length is under way;
    /// otherwise it goes on from where the upload stands. A whole upload is never replaced: it
    /// holds a blob's bytes (or is about to be hashed).
    ///
    /// - Throws: ``BlobOffsetConflict`` when `offset` is not where the upload stands.
    static func startsAnew(offset: Int64, length: Int64, upload: BlobUpload?) throws -> Bool {
        if let upload, upload.byteSize == length, upload.received == offset { return false }
        let replaceable = upload.map { $0.received < $0.byteSize && ($0.byteSize != length || $0.received == 0) } ?? true
        guard offset == 0, replaceable else {
            throw BlobOffsetConflict(offset: offset, length: length, upload: upload)
        }
        return true
    }

    /// Ends `uploader`'s upload of the blob `sha256`, whose bytes are all in: if they hash to
    /// `sha256` they become the blob where they are (unless it is stored already), and `uploader`
    /// is recorded as one who sent it. Otherwise the upload goes (unless it holds the blob's
    /// bytes already: its uploader then proves it has them without sending them again).
    ///
    /// - Parameter hashed: The bytes' SHA-256 if they were hashed as they came; nil to read them
    ///   back and hash them here.
    /// - Returns: The SHA-256 the bytes hash to: `sha256`, or the blob was not stored.
    func completeBlobUpload(sha256: String, uploader: String, length: Int64, hashed: String?) throws -> String {
        var upload = try connection.blobUpload(sha256: sha256, uploader: uploader)
        if upload == nil, length == 0 {
            // An empty blob: no byte came to start its upload.
            upload = BlobUpload(sha256: sha256, uploader: uploader, byteSize: 0, received: 0, chunkCount: 0, updatedAt: time)
            try connection.startBlobUpload(upload!)
        }
        guard let upload, upload.received == length, upload.byteSize == length else {
            throw BlobOffsetConflict(offset: length, length: length, upload: upload)
        }
        let digest = try hashed ?? hashUpload(upload)
        guard digest == sha256, !(try connection.blobExists(sha256: sha256)) else {
            try connection.deleteBlobUpload(sha256: sha256, uploader: uploader)
            if digest == sha256 { try connection.recordBlobUploader(sha256: sha256, uploader: uploader, time: time) }
            return digest
        }
        try connection.storeBlobUpload(sha256: sha256, uploader: uploader)
        try connection.recordBlobUploader(sha256: sha256, uploader: uploader, time: time)
        return digest
    }

    /// The SHA-256 of `upload`'s bytes, read back a chunk at a time.
    private func hashUpload(_ upload: BlobUpload) throws -> String {
        var hasher = SHA256()
        for number in 0..<upload.chunkCount {
            guard let chunk = try connection.blobUploadChunk(sha256: upload.sha256, uploader: upload.uploader, number: number) else {
                throw PrefsError(.internal, "Chunk \(number) of the upload of \(upload.sha256) is missing from the database.")
            }
            hasher.update(data: chunk)
        }
        return hasher.finalize().withUnsafeBytes { $0.lowercaseHex }
    }
}
