import Synchronization

/// A moment of the injected clock (the engine's: `ContinuousClock`, or one a test moves by hand)
/// that ends the writer's waits set on it once the clock reaches it: a task sleeps on the clock
/// until then, off the writer's thread.
final class ClockAlarm: Sendable {
    private let bell = Bell()
    private let sleeper: Task<Void, Never>

    /// What the alarm's task rings, and the one wait it ends.
    private final class Bell: Sendable {
        let state = Mutex<(rung: Bool, waiting: (@Sendable () -> Void)?)>((false, nil))

        /// Rings: ends the wait set, and any set later at once.
        func ring() {
            let waiting = state.withLock { state in
                state.rung = true
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?()
        }
    }

    /// An alarm that rings once `clock` reaches `moment`.
    init<C: Clock>(clock: C, at moment: C.Instant) {
        sleeper = Task { [bell] in
            do {
                try await clock.sleep(until: moment, tolerance: nil)
            } catch {
                return  // Cancelled: the alarm is no longer needed.
            }
            bell.ring()
        }
    }

    deinit {
        sleeper.cancel()
    }

    /// Whether the clock has reached the alarm's moment.
    var hasRung: Bool { bell.state.withLock { $0.rung } }

    /// Calls `end` once the alarm rings — at once if it has — unless ``clear()`` is called first.
    /// One wait at a time: the writer's thread waits for one thing at a time.
    func set(_ end: @escaping @Sendable () -> Void) {
        let rung = bell.state.withLock { state in
            if !state.rung { state.waiting = end }
            return state.rung
        }
        if rung { end() }
    }

    /// Forgets the wait set.
    func clear() {
        bell.state.withLock { $0.waiting = nil }
    }

    /// Blocks the calling thread until the alarm rings.
    func waitForRing() {
        let wait = ThreadWait<Void>()
        set { wait.end(.success(())) }
        defer { clear() }
        _ = try? wait.outcomeOnceEnded()
    }
}
