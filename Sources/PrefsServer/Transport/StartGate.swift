/// Holds one of a server's listeners back until another listens: prefsd's Unix socket answers,
/// and prefsd says it is ready, only once its TCP listener is bound — so a daemon that cannot
/// bind that address stops, saying why, before any client has reached it.
final class StartGate: Sendable {
    private let outcome: AsyncStream<Bool>
    private let decide: AsyncStream<Bool>.Continuation

    init() {
        (outcome, decide) = AsyncStream.makeStream()
    }

    /// The other listener listens: the one waiting starts.
    func open() {
        decide.yield(true)
        decide.finish()
    }

    /// The other listener has stopped, listening or not: if it never listened, the one waiting
    /// does not start either.
    func close() {
        decide.finish()
    }

    /// Whether to start: true once the gate is open, false if it closed first. Throws
    /// `CancellationError` if the task is cancelled first. One task waits.
    func wait() async throws -> Bool {
        for await opened in outcome { return opened }
        try Task.checkCancellation()
        return false
    }
}
