import Observation
import Synchronization

/// Keeps a snapshot current: fetches it, then re-fetches it after each event of a watch started
/// from the revision before the first fetch (so nothing in between is missed), and tells
/// Observation only when the snapshot differs. Following resumes after an overflow or a daemon
/// restart (see ``followChanges(of:_:from:resynchronize:onInterruption:onChange:)``). The engine
/// of ``DraftObserving`` and ``ThreadObserving``.
final class SnapshotFollower<Snapshot: Sendable & Equatable>: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let tracked = SendableKeyPath(\SnapshotFollower<Snapshot>.snapshot)
    private let current: Mutex<Snapshot>
    private let failure = Mutex<PrefsError?>(nil)
    /// Whether a first snapshot is in.
    private let hasLoaded = Mutex(false)
    /// Opens once a first snapshot is in, or following first failed.
    private let firstFetch = Latch()
    private let following = Mutex<Task<Void, Never>?>(nil)

    /// Starts with `initial`, then follows through `context`'s service. A missing context
    /// (``PrefsContext/missing``) is not followed: its error is reported at once.
    init(
        initial: Snapshot, context: PrefsContext, watch request: WatchRequest,
        fetch: @escaping @Sendable (any PrefsService) async throws -> Snapshot
    ) {
        current = Mutex(initial)
        if let absence = context.absence {
            failure.withLock { $0 = absence }
            firstFetch.open()
            return
        }
        let service = context.service
        let task = Task { [weak self] in
            await followChanges(
                of: service, request, from: nil,
                resynchronize: { [weak self] in
                    let revision = try await service.status().revision
                    self?.replace(with: try await fetch(service))
                    self?.hasLoaded.withLock { $0 = true }
                    self?.firstFetch.open()
                    return revision
                },
                onInterruption: { [weak self] reason in
                    self?.failure.withLock { $0 = reason }
                    if reason != nil { self?.firstFetch.open() }
                },
                onChange: { [weak self] _ in self?.replace(with: try await fetch(service)) }
            )
        }
        following.withLock { $0 = task }
    }

    deinit {
        following.withLock { $0?.cancel() }
    }

    /// The snapshot; reading it inside `withObservationTracking` tracks it.
    var snapshot: Snapshot {
        registrar.access(self, keyPath: tracked.keyPath)
        return current.withLock { $0 }
    }

    /// Returns once the first snapshot is in. Throws the error that kept it from coming in
    /// (see ``error``), `unavailable` if it is not in within `timeout`, or `CancellationError`.
    func loaded(timeout: Duration?) async throws {
        if let timeout {
            let inTime = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { try await self.firstFetch.wait(); return true }
                group.addTask { try await Task.sleep(for: timeout); return false }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            guard inTime else {
                throw PrefsError(.unavailable, "Not loaded within \(timeout)" + (error.map { ": \($0.message)" } ?? "."))
            }
        } else {
            try await firstFetch.wait()
        }
        guard hasLoaded.withLock({ $0 }) else {
            throw error ?? PrefsError(.unavailable, "Following stopped before the first snapshot came in.")
        }
    }

    /// Why following is interrupted, while it is.
    var error: PrefsError? { failure.withLock { $0 } }

    /// The snapshot, then each new one.
    var updates: AsyncStream<Snapshot> {
        observationUpdates { self.snapshot }
    }

    private func replace(with snapshot: Snapshot) {
        let changed = current.withLock { current in
            defer { current = snapshot }
            return current != snapshot
        }
        if changed { registrar.withMutation(of: self, keyPath: tracked.keyPath) {} }
    }
}

/// A one-way gate: `wait()` returns once `open()` has been called.
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open; throws `CancellationError` if the task is cancelled first.
    func wait() async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                // Under the lock: either the cancellation handler has run (the flag is set) and
                // will not see this waiter, or it runs later and finds it.
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if state.isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = waiter
                    return nil
                }
                if let ready { waiter.resume(with: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}
