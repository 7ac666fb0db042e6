import PrefsKit

/// Everything about a write that is not what it changes: who makes it and why (its
/// ``ChangeOrigin``), and the `Idempotency-Key` that makes it safe to send again.
///
/// It is built once, where a write enters — an HTTP endpoint builds it from the request's peer
/// and headers, a library call from the store's configuration and ``PrefsService/withReason(_:_:)``
/// — and travels as this one value through the engine's API, the group-commit writer and the
/// batch that writes the change rows. Nothing in the engine or the server reads it from
/// anywhere else.
package struct WriteContext: Sendable, Hashable {
    /// Who makes the write (nil author: the store's configured one) and why.
    package var origin: ChangeOrigin
    /// The request's key and fingerprint, when the write is to be carried out once only.
    package var idempotency: IdempotentRequest?
    /// Where sync stands in the write: nil for a write made here.
    package var sync: SyncOrigin?

    /// A context; by default that of a write with no author, reason or key of its own.
    package init(origin: ChangeOrigin = ChangeOrigin(), idempotency: IdempotentRequest? = nil, sync: SyncOrigin? = nil) {
        self.origin = origin
        self.idempotency = idempotency
        self.sync = sync
    }
}
