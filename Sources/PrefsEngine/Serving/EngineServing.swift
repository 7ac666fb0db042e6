import PrefsKit

/// What the daemon's HTTP server asks of an engine beyond ``PrefsService``: answers it can give
/// on a connection's own thread, without a task — a read from memory, a write that reports to a
/// completion, a watch read as a feed. An interface between the engine and the server, not part
/// of the API an application sees.
package protocol EngineServing: PrefsService {
    /// ``PrefsService/resolve(_:scope:explain:)`` for a valid key, answered at once from memory,
    /// with the key's revision at `scope` (``KeyState/revision(at:)``) read in the same view.
    func resolveNowWithRevision(_ key: KeyName, scope: ScopePath, explain: Bool) -> (resolved: ResolvedPreference, revisionHere: Revision)

    /// Whether changes record their author and reason: when not, the server need not work them out.
    var recordsAuthors: Bool { get }

    /// The revision of the newest change reads see; it changes with every change taken in,
    /// before a commit is acknowledged.
    var committedRevision: Revision { get }

    /// ``PrefsService/set(_:to:scope:ifRevision:)``, reporting to `completion` once the change has committed,
    /// or with the error that stopped it; once only for `idempotency`; recording `origin`. With `committingHere`, a write that finds the writer
    /// idle commits on the calling thread, where the storage allows, and `completion` runs there
    /// before `set` returns; otherwise `completion` runs on the engine's own thread.
    func set(
        _ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, idempotency: IdempotentRequest?,
        origin: ChangeOrigin?, committingHere: Bool, then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void)

    /// Brings the engine's gauges up to date, before its metrics are read.
    func refreshMetrics() async

    /// Subscribes `request` now, or throws why it cannot be (an invalid key, a `since` already
    /// compacted, too many watches open, the engine closing).
    func openWatchFeed(_ request: WatchRequest) throws -> any WatchFeed

    /// What a request carrying `secret` (the bytes after `Bearer `) may do: nil if no named
    /// token has it. From memory, without a database round trip.
    func grant(forSecret secret: [UInt8]) -> AccessGrant?

    /// The named token `name`, as this engine has taken it in; nil if there is none.
    func token(named name: String) -> AccessToken?

    /// `key` evaluated as an OpenFeature flag at `scope`; nil when it has no value there and no
    /// default.
    func evaluateFlag(_ key: String, at scope: ScopePath) -> FlagEvaluation?

    /// Every key starting with `prefix` (every key, without one) evaluated as a flag at `scope`.
    func evaluateFlags(prefix: String?, at scope: ScopePath) -> [FlagEvaluation]
}
