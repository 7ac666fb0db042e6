import Synchronization

/// A deadline on the engine's clock (``PrefsEngine/clock``): a task sleeps on that clock until
/// it, so that a test that moves the clock by hand moves the deadline too. Waits race it
/// (``race(_:)``) rather than sleeping on a clock of their own.
final class ClockDeadline: Sendable {
    private let passed = Passed()
    private let sleeper: Task<Void, Never>

    /// Whether the deadline has passed, and who waits for it: a wait that is cancelled ends at
    /// once (awaiting the sleeping task itself would not).
    private final class Passed: Sendable {
        private struct State {
            var passed = false
            var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter: UInt64 = 0
        }

        private let state = Mutex(State())

        var hasPassed: Bool { state.withLock { $0.passed } }

        /// Marks the deadline passed and ends every wait.
        func pass() {
            let waiters = state.withLock { state in
                state.passed = true
                defer { state.waiters = [:] }
                return state.waiters
            }
            for waiter in waiters.values { waiter.resume() }
        }

        /// Returns once the deadline has passed, or the task is cancelled.
        func wait() async {
            let id = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        guard !state.passed, !Task.isCancelled else { return true }
                        state.waiters[id] = waiter
                        return false
                    }
                    if now { waiter.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    /// The deadline `duration` from now on `clock`.
    init(in duration: Duration, on clock: any Clock<Duration>) {
        let passed = passed
        sleeper = Task {
            guard (try? await clock.sleep(for: duration)) != nil else { return }
            passed.pass()
        }
    }

    deinit { sleeper.cancel() }

    /// Whether the deadline has passed.
    var hasPassed: Bool { passed.hasPassed }

    /// Runs `work` until it returns, or until the deadline passes, whichever comes first; work
    /// cut short is cancelled.
    func race(_ work: @escaping @Sendable () async -> Void) async {
        let passed = passed
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { await passed.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
