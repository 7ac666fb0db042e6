import PrefsKit

/// What became of an idempotent request (``IdempotentRequest``), as a storage keeps it under the
/// request's key, in the transaction of the write itself.
package struct StoredOutcome: Sendable, Hashable {
    /// The request's `Idempotency-Key`.
    package var key: String
    /// The request's fingerprint.
    package var fingerprint: String
    /// Whether the request was refused (nothing changed); else it succeeded.
    package var refused: Bool
    /// The answer as JSON: what the write returned, or the refusal's error body.
    package var body: String
    /// The revision the request's batch worked from: revisions in ``body`` after it are the batch's
    /// own, moved by ``shift`` where the storage committed the batch after other writers' changes.
    package var baseRevision: Revision
    /// How far the storage moved the batch's revisions as it committed it (0 on a storage with
    /// one writer).
    package var shift: Revision
    /// When it was stored, in seconds since 1970: outcomes are kept for a retention, then pruned.
    package var createdAt: Double

    /// An outcome with every field given.
    package init(
        key: String, fingerprint: String, refused: Bool, body: String, baseRevision: Revision, shift: Revision = 0,
        createdAt: Double
    ) {
        self.key = key
        self.fingerprint = fingerprint
        self.refused = refused
        self.body = body
        self.baseRevision = baseRevision
        self.shift = shift
        self.createdAt = createdAt
    }
}
