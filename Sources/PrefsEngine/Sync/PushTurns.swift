import Synchronization

/// One push at a time: a replica's pusher and a `sync:now` take turns, so that the second pushes
/// what the first left in the outbox rather than the same changes again.
///
/// A lock for async code, first come first served: ``take()`` suspends (holding no thread) while
/// another push has the turn; ``give()`` hands it to the next waiting, if any.
final class PushTurns: Sendable {
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// Returns once the caller has the turn.
    func take() async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                guard state.taken else {
                    state.taken = true
                    return true
                }
                state.waiting.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    /// Ends the caller's turn.
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.taken = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
