import Synchronization

/// Feeds an `AsyncStream` the latest state as it changes: each ``send()`` reads the state and
/// yields it, unless it repeats the last one yielded. Reading and yielding happen under one
/// lock, so that a watcher's first read and the change callbacks racing it arrive in the order
/// they read — the stream never ends on an older state than the last one read.
final class LatestFeed<State: Sendable>: Sendable {
    private let last = Mutex<State?>(nil)
    private let read: @Sendable () -> State
    private let repeats: @Sendable (State, State) -> Bool
    private let continuation: AsyncStream<State>.Continuation
    /// The states, the newest kept while the reader is busy.
    let stream: AsyncStream<State>

    init(read: @escaping @Sendable () -> State, repeats: @escaping @Sendable (State, State) -> Bool) {
        (stream, continuation) = AsyncStream<State>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.read = read
        self.repeats = repeats
    }

    /// Yields the current state, unless it repeats the last one yielded.
    func send() {
        last.withLock { last in
            let state = read()
            if let last, repeats(last, state) { return }
            last = state
            continuation.yield(state)
        }
    }
}
