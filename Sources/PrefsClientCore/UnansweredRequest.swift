import PrefsKit

/// A request that went out, in whole or in part, and got no answer: the connection was lost after
/// it was sent (the daemon was killed or restarted, the socket closed). Whether the daemon carried
/// it out cannot be told from here; ``PrefsClient`` sends a write again with the same
/// `Idempotency-Key`, which makes that safe.
public struct UnansweredRequest: Error, Sendable {
    /// What the connection reported.
    public var cause: PrefsError

    /// The error of a request whose answer was lost for `cause`.
    ///
    /// - Parameter cause: What the connection reported.
    public init(cause: PrefsError) {
        self.cause = cause
    }
}
