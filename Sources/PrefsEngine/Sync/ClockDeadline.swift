import Synchronization

/// A deadline on the engine's clock (``PrefsEngine/clock``): a task sleeps on that clock until
/// it, so that a test that moves the clock by hand moves the deadline too. Waits race it
/// (``race(_:)``) rather than sleeping on a clock of their own.
final class ClockDeadline: Sendable {
    private let passed: Passed
    private let sleeper: Task<Void, Never>

    /// Whether the deadline has passed, shared with the task that waits for it.
    private final class Passed: Sendable {
        let value = Mutex(false)
    }

    /// The deadline `duration` from now on `clock`.
    init(in duration: Duration, on clock: any Clock<Duration>) {
        let passed = Passed()
        self.passed = passed
        sleeper = Task {
            guard (try? await clock.sleep(for: duration)) != nil else { return }
            passed.value.withLock { $0 = true }
        }
    }

    deinit { sleeper.cancel() }

    /// Whether the deadline has passed.
    var hasPassed: Bool { passed.value.withLock { $0 } }

    /// Runs `work` until it returns, or until the deadline passes, whichever comes first; work
    /// cut short is cancelled.
    func race(_ work: @escaping @Sendable () async -> Void) async {
        let sleeper = sleeper
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { await sleeper.value }
            await group.next()
            group.cancelAll()
        }
    }
}
