import Foundation
import Logging
import PostgresNIO
import PrefsEngine
import PrefsKit

/// Reads a blob's chunks one at a time, each only when the consumer asks for it, inside a
/// read-only `REPEATABLE READ` transaction on a connection of its own: the bytes it started with
/// stay readable, whole, until it closes, even if the last attachment using them goes meanwhile
/// (PostgreSQL keeps the rows a snapshot can see).
actor PostgresBlobReader: BlobReading {
    private let connection: PostgresConnection
    private let sha256: String
    private let chunkCount: Int
    private let logger: Logger
    private var number = 0

    /// Opens a reader of the blob `sha256`, or nil if there is none.
    static func open(sha256: String, configuration: PostgresConnection.Configuration, logger: Logger) async throws
        -> PostgresBlobReader?
    {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
        do {
            let chunkCount = try await ClosedConnectionWatch.run(on: connection) {
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                let rows = try await connection.query("SELECT chunk_count FROM blob WHERE sha256 = \(sha256) AND held", logger: logger)
                var chunkCount: Int?
                for try await count in rows.decode(Int.self) { chunkCount = count }
                return chunkCount
            }
            guard let chunkCount else {
                try? await connection.close()
                return nil
            }
            return PostgresBlobReader(connection: connection, sha256: sha256, chunkCount: chunkCount, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private init(connection: PostgresConnection, sha256: String, chunkCount: Int, logger: Logger) {
        self.connection = connection
        self.sha256 = sha256
        self.chunkCount = chunkCount
        self.logger = logger
    }

    /// The next chunk. A connection that closes meanwhile ends the read with an error
    /// (``ClosedConnectionWatch``), as it does the opening's statements.
    func next() async throws -> Data? {
        guard number < chunkCount else { return nil }
        let (connection, sha256, chunkNumber, logger) = (connection, sha256, number, logger)
        let chunk = try await ClosedConnectionWatch.run(on: connection) {
            // From blob_chunk, or from the upload the blob's bytes came by.
            let rows = try await connection.query(
                """
                SELECT data FROM blob_chunk WHERE sha256 = \(sha256) AND number = \(chunkNumber)
                UNION ALL
                SELECT c.data FROM blob b JOIN blob_upload_chunk c USING (sha256, uploader)
                WHERE b.sha256 = \(sha256) AND c.number = \(chunkNumber)
                """, logger: logger)
            var chunk: Data?
            for try await data in rows.decode(ByteBuffer.self) { chunk = Data(data.readableBytesView) }
            return chunk
        }
        guard let chunk else {
            throw PrefsError(.internal, "Chunk \(number) of the blob \(sha256) is missing from the database.")
        }
        number += 1
        return chunk
    }

    /// Ends the transaction by closing its connection (kept until it has closed: a connection
    /// must not be released open).
    nonisolated func close() {
        let connection = connection
        connection.close().whenComplete { _ in _ = connection }
    }
}
