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
    private let firstFetch = Latch()
    private let following = Mutex<Task<Void, Never>?>(nil)

    /// Starts with `initial`, then follows.
    init(
        initial: Snapshot, service: any PrefsService, watch request: WatchRequest,
        fetch: @escaping @Sendable (any PrefsService) async throws -> Snapshot
    ) {
        current = Mutex(initial)
        let firstFetch = firstFetch
        let task = Task { [weak self] in
            await followChanges(
                of: service, request, from: nil,
                resynchronize: { [weak self] in
                    let revision = try await service.status().revision
                    self?.replace(with: try await fetch(service))
                    firstFetch.open()
                    return revision
                },
                onInterruption: { [weak self] reason in
                    self?.failure.withLock { $0 = reason }
                    if reason != nil { firstFetch.open() }
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

    /// Returns once the first snapshot is in (or following failed).
    func loaded() async {
        await firstFetch.wait()
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
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(waiter) }
                return state.isOpen
            }
            if isOpen { waiter.resume() }
        }
    }
}
