import Crypto
import Synchronization

/// The SHA-256 of each blob upload so far, kept between its requests in this process: an upload
/// hashed as its bytes come needs no second read of them once all are in. An upload's hash goes
/// on only from where its last request left it; any other (a request from another offset, two at
/// once, an upload begun before the process started) is read back and hashed whole at the end.
final class UploadDigests: Sendable {
    /// Which upload: a blob and its uploader.
    struct Key: Hashable {
        let sha256: String
        let uploader: String
    }

    /// A hash of the first `received` bytes of an upload.
    struct Running {
        var hasher = SHA256()
        var received: Int64 = 0
    }

    /// The most uploads kept; past it, one of them is dropped (that upload's bytes are then read
    /// back when all are in).
    private static let limit = 64
    private let running = Mutex<[Key: Running]>([:])

    /// Takes the hash of `key`'s upload if it has hashed exactly `offset` bytes, or a new one at
    /// offset 0; nil if the bytes before `offset` must be read back. Taken, it is no one else's.
    func take(_ key: Key, at offset: Int64) -> Running? {
        let kept = running.withLock { $0.removeValue(forKey: key) }
        if let kept, kept.received == offset { return kept }
        return offset == 0 ? Running() : nil
    }

    /// Keeps `hash` of `key`'s upload, for its next request.
    func keep(_ hash: Running, for key: Key) {
        running.withLock { running in
            if running.count >= Self.limit, running[key] == nil, let any = running.keys.first { running[any] = nil }
            running[key] = hash
        }
    }
}
