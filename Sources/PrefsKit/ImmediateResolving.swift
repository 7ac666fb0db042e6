/// A ``PrefsService`` that resolves from memory without suspending, as the embedded store does.
/// The daemon answers its hottest request, `GET /v1/prefs/{key}`, straight from one on the
/// connection's own thread.
public protocol ImmediateResolving: PrefsService {
    /// ``PrefsService/resolve(_:scope:explain:)`` for a valid key, answered at once.
    func resolveNow(_ key: String, scope: ScopePath, explain: Bool) -> ResolvedPreference

    /// The revision of the newest commit reads see; it changes with every commit, before the
    /// commit is acknowledged.
    var committedRevision: Revision { get }
}
