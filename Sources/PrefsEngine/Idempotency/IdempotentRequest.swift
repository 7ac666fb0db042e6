import PrefsKit

/// A write that is safe to repeat: the `Idempotency-Key` its client chose and a fingerprint of
/// the request. The engine stores the request's outcome under the key in the write's own
/// transaction — its answer, or the refusal that changed nothing — so that the same request sent
/// again, after a lost connection or a restart, through this host or another sharing the
/// database, gets that outcome and changes nothing; the same key with another request is refused
/// (`idempotency_key_reused`), and while the first is still being carried out on this host, a
/// repeat is told so (`request_in_progress`).
///
/// The server builds it from the request's `Idempotency-Key` header, and it travels to the
/// engine's writer in the request's ``WriteContext``.
package struct IdempotentRequest: Sendable, Hashable {
    /// The key the client sent.
    package var key: String
    /// What the request asks for (its method, target, condition and body), hashed: the same key
    /// with another fingerprint is another request.
    package var fingerprint: String

    /// The longest key accepted, in bytes.
    package static let maximumKeyLength = 255

    /// A request with a key checked against the header's rules: 1 to 255 visible ASCII characters.
    package init(key: String, fingerprint: String) throws {
        guard !key.isEmpty, key.utf8.count <= Self.maximumKeyLength, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw PrefsError(
                .invalidRequest,
                "Idempotency-Key takes 1 to \(Self.maximumKeyLength) visible ASCII characters (a UUID, say), not '\(key.prefix(300))'.")
        }
        self.key = key
        self.fingerprint = fingerprint
    }

    /// The error of a key sent again with a different request.
    var reusedError: PrefsError {
        PrefsError(
            .idempotencyKeyReused,
            "Idempotency-Key '\(key)' was used for a different request; nothing was changed. Send a new key with a new request.")
    }

    /// The error of a key sent again while the request it was first sent with is being carried out.
    var inProgressError: PrefsError {
        PrefsError(
            .requestInProgress,
            "A request with Idempotency-Key '\(key)' is still being carried out; nothing more was done. Send it again in a moment for its outcome.")
    }
}
