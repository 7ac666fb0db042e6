/// A ``PrefsService`` that takes a write and reports its outcome to a completion instead of to
/// an awaiting task, as the embedded store can: the daemon submits a plain `PUT` from the
/// connection's own thread, and answers from the completion.
public protocol CompletionWriting: PrefsService {
    /// ``PrefsService/set(_:to:scope:)``, reporting to `completion` once the change has
    /// committed, or with the error that stopped it.
    ///
    /// With `committingHere`, a write that finds the store's writer idle commits on the calling
    /// thread, and `completion` runs there before `set` returns; otherwise the write never runs
    /// on the calling thread, and `completion` runs on the store's own.
    func set(
        _ key: String, to value: JSONValue, scope: ScopePath, committingHere: Bool,
        then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void)
}
