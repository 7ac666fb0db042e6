import Foundation

/// The bytes of a blob a replica fetches from its upstream, relayed to the read that asked for
/// them as they come (``PrefsEngine/fetchBlob(of:)``): the read does not wait for the whole
/// fetch to be stored first. The fetch stores what it relays; the read gets each piece as the
/// fetch takes it, except the last, held back until the fetch has all the bytes and they hash
/// to the blob's SHA-256 (``hashedRight()``) — a fetch that fails before ends the read with its
/// error, never with the wrong bytes whole. The read then ends while the fetch stores the bytes:
/// what it read is the blob's, whether or not this device keeps them (a store that fails leaves
/// the next read to fetch them again).
///
/// While the read has a few pieces unread, the fetch waits for it (one connection's pace, in a
/// few pieces of memory); once the read closes, the fetch goes on alone.
actor FetchedBytes: BlobReading {
    /// How many pieces may wait unread before the fetch waits for the read.
    private static let unreadLimit = 4

    /// The fetch's bytes, being relayed.
    private var source: AsyncThrowingStream<Data, any Error>.AsyncIterator?
    /// Pieces passed on and not read yet.
    private var unread: [Data] = []
    /// How the fetch ended: the bytes stored, or the error that stopped it.
    private var outcome: Result<Void, any Error>?
    /// Whether every byte came and they hash right: the read may have the last piece.
    private var whole = false
    /// Whether the read has closed: nothing more is kept for it.
    private var closed = false
    /// The read, waiting for a piece or the fetch's end.
    private var waitingRead: CheckedContinuation<Void, Never>?
    /// The fetch, waiting for the read to take what waits.
    private var waitingFetch: CheckedContinuation<Void, Never>?

    /// `bytes`, each piece passed on to the read as the fetch takes it.
    func relaying(_ bytes: AsyncThrowingStream<Data, any Error>) -> AsyncThrowingStream<Data, any Error> {
        source = bytes.makeAsyncIterator()
        return AsyncThrowingStream { try await self.nextFromSource() }
    }

    /// Every byte has come, and they hash to the blob's SHA-256: the read may have the last
    /// piece, and end, while the fetch stores them.
    func hashedRight() {
        whole = true
        wake(&waitingRead)
    }

    /// The fetch has ended: `outcome` says whether the bytes are stored.
    func finish(_ outcome: Result<Void, any Error>) {
        self.outcome = outcome
        if case .success = outcome { whole = true }
        wake(&waitingRead)
    }

    /// Returns once the fetch has passed on its first piece or ended; throws the error a fetch
    /// that failed before any piece ended with (the upstream unreachable, the blob not found).
    func started() async throws {
        while unread.isEmpty, outcome == nil { await withCheckedContinuation { waitingRead = $0 } }
        if unread.isEmpty, case .failure(let error) = outcome { throw error }
    }

    func next() async throws -> Data? {
        while true {
            if unread.count > 1 || (whole && !unread.isEmpty) {
                let piece = unread.removeFirst()
                wake(&waitingFetch)
                return piece
            }
            // Once the bytes are whole and right, a store that fails does not undo the read.
            if whole { return nil }
            if case .failure(let error) = outcome { throw error }
            await withCheckedContinuation { waitingRead = $0 }
        }
    }

    nonisolated func close() {
        Task { await self.stopRelaying() }
    }

    /// The read has gone: the fetch goes on without passing it anything.
    private func stopRelaying() {
        closed = true
        unread = []
        wake(&waitingFetch)
    }

    /// The fetch's next piece, passed on to the read — once fewer than ``unreadLimit`` wait
    /// unread there.
    private func nextFromSource() async throws -> Data? {
        guard var iterator = source else { return nil }
        // An actor's stored iterator cannot be advanced in place across a suspension.
        defer { source = iterator }
        guard let piece = try await iterator.next(isolation: self) else { return nil }
        guard !closed else { return piece }
        unread.append(piece)
        wake(&waitingRead)
        while unread.count >= Self.unreadLimit, !closed { await withCheckedContinuation { waitingFetch = $0 } }
        return piece
    }

    /// Resumes the task `waiting`, if any.
    private func wake(_ waiting: inout CheckedContinuation<Void, Never>?) {
        waiting?.resume()
        waiting = nil
    }
}
