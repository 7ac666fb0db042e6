import Synchronization

/// A count that tests wait on: something the code under test does (a clock read, a writer run, a
/// change-log read) increments it, and a test suspends until it reaches a number — no sleeping,
/// no polling.
public final class Tally: Sendable {
    private struct State: ~Copyable {
        var count = 0
        var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// A count at zero.
    public init() {}

    /// The count now.
    public var count: Int { state.withLock { $0.count } }

    /// Adds one, and resumes the waiters whose number it reaches.
    public func increment() {
        let reached = state.withLock { state in
            state.count += 1
            let count = state.count
            let reached = state.waiters.filter { $0.target <= count }
            state.waiters.removeAll { $0.target <= count }
            return reached
        }
        for waiter in reached { waiter.continuation.resume() }
    }

    /// Returns once the count is at least `target`.
    public func reach(_ target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state in
                guard state.count < target else { return true }
                state.waiters.append((target, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
