import PrefsKit

/// What became of an idempotent request (``IdempotentRequest``), as a storage keeps it under the
/// request's key, in the transaction of the write itself.
public struct StoredOutcome: Sendable, Hashable {
    /// The request's `Idempotency-Key`.
    public var key: String
    /// The request's fingerprint.
    public var fingerprint: String
    /// Whether the request was refused (nothing changed); else it succeeded.
    public var refused: Bool
    /// The answer as JSON: what the write returned, or the refusal's error body.
    public var body: String
    /// The revision the request's batch worked from: revisions in ``body`` after it are the batch's
    /// own, moved by ``shift`` where the storage committed the batch after other writers' changes.
    public var baseRevision: Revision
    /// How far the storage moved the batch's revisions as it committed it (0 on a storage with
    /// one writer).
    public var shift: Revision
    /// When it was stored, in seconds since 1970: outcomes are kept for a retention, then pruned.
    public var createdAt: Double

    /// An outcome with every field given.
    public init(
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
