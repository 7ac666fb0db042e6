import Foundation

/// An attachment's bytes as a download reads them: one chunk at a time, only when the consumer
/// asks for the next, so a slow reader (a download over a socket) holds one chunk in memory, not
/// the whole file. The blob stays readable until the download ends — read to its end, failed, or
/// dropped by its consumer midway — and is released then.
final class BlobDownload: Sendable {
    private let blob: any BlobReading

    init(_ blob: any BlobReading) {
        self.blob = blob
    }

    /// The next chunk; nil after the last.
    func next() async throws -> Data? {
        do {
            guard let chunk = try await blob.next() else {
                blob.close()
                return nil
            }
            return chunk
        } catch {
            blob.close()
            throw error
        }
    }

    deinit {
        blob.close()
    }
}
