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
    /// otherwise it goes on from where the upload stands.
    ///
    /// - Throws: ``BlobOffsetConflict`` when `offset` is not where the upload stands.
    static func startsAnew(offset: Int64, length: Int64, upload: BlobUpload?) throws -> Bool {
        if let upload, upload.byteSize == length, upload.received == offset { return false }
        guard offset == 0, upload?.byteSize != length || upload?.received == 0 else {
            throw BlobOffsetConflict(offset: offset, length: length, upload: upload)
        }
        return true
    }

    /// Ends `uploader`'s upload of the blob `sha256`, whose bytes are all in: hashes them on
    /// their way to a file in `folder`, and stores them as the blob if they hash to `sha256`
    /// (unless it is stored already), recording `uploader` as one who sent it. The upload goes
    /// either way.
    ///
    /// - Returns: The SHA-256 the bytes hash to: `sha256`, or the blob was not stored.
    func completeBlobUpload(sha256: String, uploader: String, length: Int64, stagingIn folder: URL) throws -> String {
        let upload = try connection.blobUpload(sha256: sha256, uploader: uploader)
        guard (upload?.received ?? 0) == length, upload.map({ $0.byteSize == length }) ?? true else {
            throw BlobOffsetConflict(offset: length, length: length, upload: upload)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = folder.appending(path: UUID().uuidString)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw PrefsError(.storageFull, "Cannot create an upload file in \(folder.path).")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        var hasher = SHA256()
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            for number in 0..<(upload?.chunkCount ?? 0) {
                guard let chunk = try connection.blobUploadChunk(sha256: sha256, uploader: uploader, number: number) else {
                    throw PrefsError(.internal, "Chunk \(number) of the upload of \(sha256) is missing from the database.")
                }
                hasher.update(data: chunk)
                try handle.write(contentsOf: chunk)
            }
        } catch {
            throw StagingErrors.translate(error)
        }
        let digest = hasher.finalize().withUnsafeBytes { $0.lowercaseHex }
        try connection.deleteBlobUpload(sha256: sha256, uploader: uploader)
        guard digest == sha256 else { return digest }
        if !(try connection.blobExists(sha256: sha256)) {
            try connection.insertBlob(sha256: sha256, byteSize: length, from: file)
        }
        try connection.recordBlobUploader(sha256: sha256, uploader: uploader, time: time)
        return digest
    }
}
