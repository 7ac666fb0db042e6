import Synchronization

/// The blobs downloads under way are reading, each with its count of downloads: a download that
/// has begun delivers the bytes it began with, whole, even if its attachment is removed or its
/// draft deleted meanwhile.
///
/// A blob no attachment uses any more is kept while it is held, and freed when its last hold is
/// released (``BlobHold``). A hold lives in memory only: a blob whose last download was cut off
/// by a crash is freed when the store next opens.
final class BlobHolds: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more download of the blob `sha256`.
    func hold(_ sha256: String) {
        counts.withLock { $0[sha256, default: 0] += 1 }
    }

    /// Counts one download of the blob `sha256` less; true if it was the last.
    func release(_ sha256: String) -> Bool {
        counts.withLock { counts in
            guard let count = counts[sha256] else { return false }
            counts[sha256] = count > 1 ? count - 1 : nil
            return count == 1
        }
    }

    /// Whether a download is reading the blob `sha256`.
    func isHeld(_ sha256: String) -> Bool {
        counts.withLock { $0[sha256] != nil }
    }
}

/// One download's hold on its blob, released once: when the download has read the last chunk, or
/// when it is dropped unfinished. The last hold of a blob frees it if no attachment uses it.
final class BlobHold: Sendable {
    /// The blob held.
    let sha256: String
    private let holds: BlobHolds
    /// Frees the blob if nothing uses it (a write of the store's).
    private let free: @Sendable (String) async -> Void
    private let released = Atomic<Bool>(false)

    /// Holds `sha256` in `holds` until released; `free` frees it after the last hold.
    init(_ sha256: String, in holds: BlobHolds, free: @escaping @Sendable (String) async -> Void) {
        self.sha256 = sha256
        self.holds = holds
        self.free = free
        holds.hold(sha256)
    }

    /// Releases the hold, and once the blob is freed if this was its last, returns.
    func release() async {
        guard take() else { return }
        await free(sha256)
    }

    /// Releases the hold now, and frees the blob soon if this was its last hold.
    func releaseSoon() {
        guard take() else { return }
        let (free, sha256) = (free, sha256)
        Task { await free(sha256) }
    }

    deinit {
        releaseSoon()
    }

    /// Releases the hold if it is still held; true if the blob then needs freeing.
    private func take() -> Bool {
        !released.exchange(true, ordering: .acquiringAndReleasing) && holds.release(sha256)
    }
}
