import Crypto
import Foundation
import PrefsKit
import Synchronization

/// Attachments' bytes between a replica and its upstream, beside its exchanges
/// (``BlobTransport``): the bytes a pushed draft references go up before the change, each blob
/// once — not at all if the upstream holds it — and the bytes of another device's attachment
/// come down when it is first read here, so that a replica of a large account does not copy
/// every file.
extension PrefsEngine {
    /// Sends the upstream the bytes of the attachments `drafts` add — those their bases do not
    /// have — that it does not hold yet, each once, from the offset it holds (an upload cut off
    /// goes on there).
    package func uploadAttachments(of drafts: [DraftMutation], through blobs: any BlobTransport) async throws {
        guard let replica else { return }
        var seen: Set<String> = []
        for mutation in drafts {
            guard let draft = mutation.draft else { continue }
            let known = Set(replica.draftBase(of: mutation.id)?.draft?.attachments.map(\.sha256) ?? [])
            for attachment in draft.attachments where !known.contains(attachment.sha256) && seen.insert(attachment.sha256).inserted {
                if case .held = try await blobs.heldOffset(of: attachment.sha256) { continue }
                // Bytes this replica does not hold: the upstream refuses the change, kept as a loser.
                guard let byteSize = try await storage.blobSize(sha256: attachment.sha256) else { continue }
                _ = try await blobs.upload(sha256: attachment.sha256, byteSize: byteSize) { offset in
                    try await self.storedBytes(of: attachment.sha256, from: offset)
                }
            }
        }
    }

    /// Fetches the bytes of `attachment` — one another device attached, whose bytes this replica
    /// knows of but does not hold — from the upstream, stores them, and opens them: the first
    /// read of such an attachment on this device. The bytes are hashed and staged as they come,
    /// and stored at once when all are in; the read that starts the fetch gets them as they come
    /// too (``FetchedBytes``), the last piece once all have come and hash right, while they are
    /// stored; other reads of the same bytes meanwhile wait for the fetch, then read what it
    /// stored. Nil when this store holds no such bytes and is no replica.
    ///
    /// - Throws: ``PrefsError`` — `unavailable` when this replica is not syncing (its upstream
    ///   not given yet); `unreachable` when the upstream cannot be reached, or the bytes stop
    ///   coming; `not_found` if the upstream no longer holds the bytes for this device;
    ///   `digest_mismatch` if what came does not hash to the attachment's SHA-256 (nothing is
    ///   kept).
    func fetchBlob(of attachment: Attachment) async throws -> (any BlobReading)? {
        guard let replica else { return nil }
        guard let blobs = replica.transport.withLock({ $0 }) as? any BlobTransport else {
            throw PrefsError(
                .unavailable,
                "The bytes of attachment \(attachment.id.uuidString) are on the upstream, and this store is not syncing with it: start sync, then read it again.")
        }
        let sha256 = attachment.sha256
        let (fetch, relayed) = replica.fetches.withLock { fetches -> (Task<Void, any Error>, FetchedBytes?) in
            if let running = fetches[sha256] { return (running, nil) }
            let relayed = FetchedBytes()
            let fetch = Task {
                defer { _ = replica.fetches.withLock { $0.removeValue(forKey: sha256) } }
                do {
                    try await download(attachment, from: blobs, relayingTo: relayed)
                    await relayed.finish(.success(()))
                } catch {
                    await relayed.finish(.failure(error))
                    throw error
                }
            }
            fetches[sha256] = fetch
            return (fetch, relayed)
        }
        if let relayed {
            try await relayed.started()
            return relayed
        }
        try await fetch.value
        return try await storage.openBlob(sha256)
    }

    /// Downloads the bytes of `attachment` from `blobs`, passing each piece on to `relayed` as it
    /// comes, hashed and written to a staging file on the way; once all are in and hash to the
    /// attachment's SHA-256, stores them in one transaction.
    private func download(_ attachment: Attachment, from blobs: any BlobTransport, relayingTo relayed: FetchedBytes) async throws {
        let (sha256, length, id) = (attachment.sha256, attachment.byteSize, attachment.id.uuidString)
        let file = try newStagingFile()
        defer { try? FileManager.default.removeItem(at: file) }
        var hasher = SHA256()
        var received: Int64 = 0
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            for try await piece in await relayed.relaying(try await blobs.download(sha256: sha256)) {
                received += Int64(piece.count)
                guard received <= length else { break }
                hasher.update(data: piece)
                try handle.write(contentsOf: piece)
            }
        }
        guard received >= length else {
            throw PrefsError(.unreachable, "The upstream sent \(received) of the \(length) bytes of attachment \(id), then no more: read it again.")
        }
        let digest = hasher.finalize().withUnsafeBytes { $0.lowercaseHex }
        guard received == length, digest == sha256 else {
            throw PrefsError(
                .digestMismatch,
                "The upstream sent bytes for attachment \(id) that are not its \(length) bytes of SHA-256 \(sha256); none of them was kept.")
        }
        await relayed.hashedRight()
        try await write(WriteContext()) { batch in
            guard !(try batch.connection.blobExists(sha256: sha256)) else { return }
            try batch.connection.insertBlob(sha256: sha256, byteSize: length, from: file)
        }
    }

    /// The stored blob `sha256`'s bytes from `offset` on, read a chunk at a time as they are
    /// asked for.
    ///
    /// - Throws: ``PrefsError`` `not_found` if the bytes are no longer stored here.
    private func storedBytes(of sha256: String, from offset: Int64) async throws -> AsyncThrowingStream<Data, any Error> {
        guard let reader = try await storage.openBlob(sha256) else {
            throw PrefsError(.notFound, "The bytes of blob \(sha256) are no longer stored here.")
        }
        let download = BlobDownload(reader)
        // The chunks before `offset` are read past; the one it falls in is cut there.
        var (skipped, first): (Int64, Data?) = (0, nil)
        while skipped < offset, let chunk = try await download.next() {
            if skipped + Int64(chunk.count) > offset { first = Data(chunk.dropFirst(Int(offset - skipped))) }
            skipped += Int64(chunk.count)
        }
        let head = Mutex(first)
        return AsyncThrowingStream {
            if let first = head.withLock({ $0.take() }) { return first }
            return try await download.next()
        }
    }
}
