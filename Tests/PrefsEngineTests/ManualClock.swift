import Synchronization

/// A clock that stands still until the test moves it (Hummingbird's and swift-nio's tests drive
/// their timers so): the engine's windows — the writer's 500 µs straggler wait, the 5 ms catch-up
/// grace — end exactly when the test says, whatever the machine's load.
final class ManualClock: Clock, Sendable {
    typealias Duration = Swift.Duration

    /// A moment of the clock: how far it was moved from its start.
    struct Instant: InstantProtocol {
        typealias Duration = Swift.Duration

        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State: ~Copyable {
        var now = Instant(offset: .zero)
        var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    /// How many times the time was read: a waiting loop reads it at every turn.
    let reads = Tally()
    /// How many sleeps began.
    let sleeps = Tally()

    var now: Instant {
        defer { reads.increment() }
        return state.withLock { $0.now }
    }

    var minimumResolution: Duration { .zero }

    /// Returns once the clock is moved to `deadline` or past it.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let due = state.withLock { state in
                guard state.now < deadline else { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            sleeps.increment()
            if due { continuation.resume() }
        }
    }

    /// Moves the clock on by `duration`, waking the sleeps that are then over.
    func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How far the clock has been moved.
    var moved: Duration { state.withLock { $0.now.offset } }
}
