/// A ``PrefsService`` that takes a write and reports its outcome to a completion instead of to
/// an awaiting task, as the embedded store can: the daemon submits a plain `PUT` from the
/// connection's own thread, and answers from the completion.
public protocol CompletionWriting: PrefsService {
    /// ``PrefsService/set(_:to:scope:)``, reporting to `completion` — on the store's own thread,
    /// once the change has committed, or with the error that stopped it. The write never runs on
    /// the calling thread.
    func set(
        _ key: String, to value: JSONValue, scope: ScopePath,
        then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void)
}
