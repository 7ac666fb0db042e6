import Foundation

/// A file sent as an upload's body: read in 256 KiB pieces as the upload asks for them, never
/// held whole. Its size, taken first, can be sent as the body's length; a file that gets shorter
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

    /// Opens a file to upload.
    ///
    /// - Parameter path: The file's path.
    /// - Throws: ``PrefsError`` — `not_found` if it is not a file that can be read.
    public init(path: String) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes, attributes[.type] as? FileAttributeType != .typeDirectory,
            let size = (attributes[.size] as? NSNumber)?.int64Value, let handle = FileHandle(forReadingAtPath: path)
        else {
            throw PrefsError(.notFound, "Cannot read \(path): it is not a file this user can read.")
        }
        self.path = path
        self.size = size
        self.handle = handle
        remaining = size
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
