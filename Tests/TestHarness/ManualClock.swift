import Synchronization

/// A clock that stands still until the test moves it (swift-nio's tests drive their timers so):
/// the engine's windows — the writer's 500 µs straggler wait, the 5 ms catch-up grace, the
/// PostgreSQL writer's lost-commit deadline — end exactly when the test says, whatever the
/// machine's load. It counts its reads and sleeps, and tells a test when sleeps are under
/// way, so that it moves the clock only once the code waits on it.
public final class ManualClock: Clock, Sendable {
    public typealias Duration = Swift.Duration

    /// A moment of the clock: how far it was moved from its start.
    public struct Instant: InstantProtocol {
        public typealias Duration = Swift.Duration

        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// A sleep under way: its task waits until the clock reaches `deadline`.
    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// The time, the sleeps under way, and the test waiting for some.
    private struct State: ~Copyable {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// The sleeps cancelled before they were under way.
        var cancelled: Set<Int> = []
        /// A test waiting for `count` sleeps under way that end by `bound`.
        var watching: (count: Int, bound: Instant, continuation: CheckedContinuation<Instant, Never>)?

        /// The watching test, and the first end of the sleeps it waits for, once they are under way.
        mutating func wakeWatcher() -> (CheckedContinuation<Instant, Never>, Instant)? {
            guard let watching else { return nil }
            let ends = sleepers.map(\.deadline).filter { $0 <= watching.bound }
            guard ends.count >= watching.count, let first = ends.min() else { return nil }
            self.watching = nil
            return (watching.continuation, first)
        }
    }

    private let state = Mutex(State())
    /// How many times the time was read: a waiting loop reads it at every turn.
    public let reads = Tally()
    /// How many sleeps began.
    public let sleeps = Tally()

    /// A clock at its start.
    public init() {}

    public var now: Instant {
        defer { reads.increment() }
        return state.withLock { $0.now }
    }

    public var minimumResolution: Duration { .zero }

    /// How far the clock has been moved.
    public var moved: Duration { state.withLock { $0.now.offset } }

    /// Returns once the clock is moved to `deadline` or past it; throws `CancellationError` if the
    /// sleeping task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (ended, watcher) = state.withLock { state -> (Result<Void, any Error>?, (CheckedContinuation<Instant, Never>, Instant)?) in
                    if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), nil) }
                    guard state.now < deadline else { return (.success(()), nil) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (nil, state.wakeWatcher())
                }
                sleeps.increment()
                if let ended { continuation.resume(with: ended) }
                if let (watcher, first) = watcher { watcher.resume(returning: first) }
            }
        } onCancel: {
            let cancelled = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil as CheckedContinuation<Void, any Error>?
                }
                return state.sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Waits until `count` sleeps that end by `bound` are under way, and returns when the first of
    /// them ends.
    public func firstEnd(ofSleeps count: Int, endingBy bound: Instant) async -> Instant {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                state.watching = (count, bound, continuation)
                return state.wakeWatcher()
            }
            if let (watcher, first) = ready { watcher.resume(returning: first) }
        }
    }

    /// Moves the clock on to `instant`, waking the sleeps that are then over.
    public func advance(to instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            defer { state.sleepers.removeAll { $0.deadline <= now } }
            return state.sleepers.filter { $0.deadline <= now }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock on by `duration`.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }
}
