import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// Reads a blob's chunks one at a time, each only when the consumer asks for it. Its
/// ``BlobHold`` keeps the bytes until the last chunk is read, or the read is closed unfinished.
actor SQLiteBlobReader: BlobReading {
    private let pool: DatabasePool
    private let sha256: String
    private let chunkCount: Int
    private let hold: BlobHold
    private var number = 0

    init(pool: DatabasePool, sha256: String, chunkCount: Int, hold: BlobHold) {
        self.pool = pool
        self.sha256 = sha256
        self.chunkCount = chunkCount
        self.hold = hold
    }

    /// The next chunk; nil after the last, once the hold is released (and the bytes freed, if
    /// nothing else uses them).
    func next() async throws -> Data? {
        guard number < chunkCount else {
            await hold.release()
            return nil
        }
        let (sha256, number) = (sha256, number)
        guard let chunk = try await pool.read({ db in try DraftRecords.chunk(db, sha256: sha256, number: number) }) else {
            throw PrefsError(.internal, "Chunk \(number) of the blob \(sha256) is missing from the database.")
        }
        self.number += 1
        return chunk
    }

    /// Releases the hold of a read left unfinished.
    nonisolated func close() {
        hold.releaseSoon()
    }
}
