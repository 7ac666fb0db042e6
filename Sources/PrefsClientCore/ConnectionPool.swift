import Synchronization

/// The keep-alive connections of one ``UnixSocketTransport``: a request takes an idle one (or
/// opens one) and gives it back once its answer is read whole, for the next request to reuse.
/// At most ``maximumOpen`` are open at once — further requests wait, first come first served,
/// for one to be given back — and at most ``maximumIdle`` are kept idle. Watches and downloads
/// have connections of their own, outside the pool.
final class ConnectionPool: Sendable {
    /// Requests in flight at once; more wait their turn.
    static let maximumOpen = 32
    /// Idle connections kept for reuse; more are closed.
    static let maximumIdle = 8

    /// A connection to send on, and whether it served an earlier request.
    struct Lease {
        let connection: DaemonConnection
        let isReused: Bool
    }

    private struct State {
        var idle: [DaemonConnection] = []
        /// Connections open, idle or in use.
        var open = 0
        /// Requests waiting for a turn, oldest first: each gets a connection given back, or
        /// (nil) the right to open one.
        var waiters: [(id: Int, continuation: CheckedContinuation<DaemonConnection?, any Error>)] = []
        var nextWaiter = 0
    }

    private let path: String
    private let connectTimeout: Duration
    private let state = Mutex(State())

    init(path: String, connectTimeout: Duration) {
        self.path = path
        self.connectTimeout = connectTimeout
    }

    /// A connection for one request: an idle one the daemon has not closed meanwhile, else a
    /// new one — after waiting, if ``maximumOpen`` are in use. Give it back with
    /// ``giveBack(_:reusable:)`` (also on failure).
    func take() async throws -> Lease {
        enum Step {
            case reuse(DaemonConnection)
            case open
            case wait(id: Int)
        }
        var closed: [DaemonConnection] = []
        let step = state.withLock { state -> Step in
            while let connection = state.idle.popLast() {
                // Closed by the daemon while idle (it stopped or restarted).
                guard connection.hasInput else { return .reuse(connection) }
                closed.append(connection)
                state.open -= 1
            }
            guard state.open < Self.maximumOpen else {
                defer { state.nextWaiter += 1 }
                return .wait(id: state.nextWaiter)
            }
            state.open += 1
            return .open
        }
        for connection in closed { connection.close() }
        switch step {
        case .reuse(let connection):
            return Lease(connection: connection, isReused: true)
        case .open:
            return try await open()
        case .wait(let id):
            if let connection = try await waitForTurn(id) { return Lease(connection: connection, isReused: true) }
            return try await open()
        }
    }

    /// Gives back a connection from ``take()``: kept for reuse if `reusable` (its answer was
    /// read whole and the daemon keeps it open), else closed. Either way the next waiting
    /// request gets its turn.
    func giveBack(_ connection: DaemonConnection, reusable: Bool) {
        let (waiter, keep) = state.withLock { state -> (CheckedContinuation<DaemonConnection?, any Error>?, Bool) in
            // A waiting request takes over the slot: with this connection, or the right to open one.
            if !state.waiters.isEmpty { return (state.waiters.removeFirst().continuation, reusable) }
            if reusable, state.idle.count < Self.maximumIdle {
                state.idle.append(connection)
                return (nil, true)
            }
            state.open -= 1
            return (nil, false)
        }
        if !keep { connection.close() }
        waiter?.resume(returning: keep ? connection : nil)
    }

    /// Opens a connection in a slot already counted in `open`; frees the slot if it fails.
    private func open() async throws -> Lease {
        do {
            return Lease(connection: try await DaemonConnection.open(path: path, timeout: connectTimeout), isReused: false)
        } catch {
            releaseSlot()
            throw error
        }
    }

    /// A slot that held no connection is free again: the next waiter may open one.
    private func releaseSlot() {
        let waiter = state.withLock { state -> CheckedContinuation<DaemonConnection?, any Error>? in
            if state.waiters.isEmpty {
                state.open -= 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        waiter?.resume(returning: nil)
    }

    /// Waits for a connection given back (or, nil, a free slot); `CancellationError` if the task
    /// is cancelled first.
    private func waitForTurn(_ id: Int) async throws -> DaemonConnection? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DaemonConnection?, any Error>) in
                let cancelled = state.withLock { state in
                    if Task.isCancelled { return true }
                    state.waiters.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<DaemonConnection?, any Error>? in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    deinit {
        for connection in state.withLock({ $0.idle }) { connection.close() }
    }
}
