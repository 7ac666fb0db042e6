import Foundation

/// A file sent as an upload's body, whole or from an offset: read in 256 KiB pieces as the upload
/// asks for them, never held whole. Its size, taken first, can be sent as the body's length (less
/// the offset); a file that gets shorter
/// meanwhile ends the upload (nothing is kept), one that grows is sent as it was. What
/// ``DraftsService/addAttachment(to:_:contentsOf:ifRevision:)`` and `prefsctl drafts attach` send.
public actor FileUpload {
    /// How much is read at a time.
    static let pieceSize = 256 * 1024

    /// The file.
    public nonisolated let path: String
    /// The file's size when the upload began.
    public nonisolated let size: Int64
    private let handle: FileHandle
    private var remaining: Int64

    /// Opens a file to upload, from its byte `offset` on (a blob's upload going on from where
    /// it stopped).
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - offset: The first byte to send; 0 (the default) sends the whole file.
    /// - Throws: ``PrefsError`` — `not_found` if it is not a file that can be read,
    ///   `invalid_request` if it is shorter than `offset`.
    public init(path: String, from offset: Int64 = 0) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes, attributes[.type] as? FileAttributeType != .typeDirectory,
            let size = (attributes[.size] as? NSNumber)?.int64Value, let handle = FileHandle(forReadingAtPath: path)
        else {
            throw PrefsError(.notFound, "Cannot read \(path): it is not a file this user can read.")
        }
        guard (0...size).contains(offset) else {
            throw PrefsError(.invalidRequest, "\(path) is \(size) bytes long: it has no byte \(offset) to send from.")
        }
        do {
            try handle.seek(toOffset: UInt64(offset))
        } catch {
            throw PrefsError(.invalidRequest, "Reading \(path) failed: \(error.localizedDescription).")
        }
        self.path = path
        self.size = size
        self.handle = handle
        remaining = size - offset
    }

    /// The file's bytes, piece by piece, each piece's size given to `progress` as it is read.
    /// Read them once.
    ///
    /// - Parameter progress: Called with each piece's size as it is read, or nil.
    /// - Returns: The file's bytes, in pieces of up to 256 KiB.
    public nonisolated func bytes(reporting progress: (@Sendable (Int) -> Void)? = nil) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { try await self.nextPiece(reporting: progress) }
    }

    private func nextPiece(reporting progress: (@Sendable (Int) -> Void)?) throws -> Data? {
        guard remaining > 0 else { return nil }
        let piece: Data?
        do {
            piece = try handle.read(upToCount: Int(min(Int64(Self.pieceSize), remaining)))
        } catch {
            throw PrefsError(.invalidRequest, "Reading \(path) failed: \(error.localizedDescription); nothing was kept.")
        }
        guard let piece, !piece.isEmpty else {
            throw PrefsError(.conflict, "\(path) got shorter while it was being sent; nothing was kept.")
        }
        remaining -= Int64(piece.count)
        progress?(piece.count)
        return piece
    }
}
