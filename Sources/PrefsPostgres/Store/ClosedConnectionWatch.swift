import NIOCore
import PostgresNIO
import Synchronization

/// Ends a wait for PostgreSQL's answer once the connection it waits on has closed.
///
/// The driver hands a statement to its connection's channel with no promise to fail: a statement
/// handed over as the connection closes — the server ended the session, or went away — reaches a
/// pipeline already torn down, and its answer never comes, neither rows nor error. A wait for it
/// would last for ever: a writer that never commits again, a catch-up that never ends, a daemon
/// that cannot stop. So every wait for an answer is watched: while it lasts, the connection is
/// looked at every ``interval``, and once it is closed, `closed` ends the wait as a lost
/// connection — which it is, whether or not the statement ran.
///
/// A watch is a task of the connection's event loop, cancelled when the answer comes: a pooled
/// read's, a download's, a start's migrations', and the listener's for as long as it listens.
/// The writer, which sends statement after statement on one connection, watches it once instead
/// (``WatchedConnection``).
enum ClosedConnectionWatch {
    /// How often a wait's connection is looked at.
    static let interval = TimeAmount.seconds(1)

    /// Watches `connection` until the returned task is cancelled; calls `closed` once, if the
    /// connection is found closed first.
    private static func start(on connection: PostgresConnection, _ closed: @escaping @Sendable () -> Void) -> RepeatedTask {
        connection.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { watch in
            guard connection.isClosed else { return }
            watch.cancel()
            closed()
        }
    }

    /// Runs `body`, which waits on `connection`, in a task of its own, and returns what it
    /// returns; throws `ChannelError.ioOnClosedChannel` if the connection closes before `body`
    /// ends — cancelling `body`'s task, but not waiting for it, as a wait the driver never
    /// answers ignores cancellation too — and `CancellationError` if the calling task is
    /// cancelled first.
    static func run<T: Sendable>(on connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = Mutex<(waiting: CheckedContinuation<T, any Error>?, result: Result<T, any Error>?)>((nil, nil))
        @Sendable func end(_ result: Result<T, any Error>) {
            let waiting = outcome.withLock { outcome -> CheckedContinuation<T, any Error>? in
                guard outcome.result == nil else { return nil }
                outcome.result = result
                defer { outcome.waiting = nil }
                return outcome.waiting
            }
            waiting?.resume(with: result)
        }
        let running = Task {
            do {
                end(.success(try await body()))
            } catch {
                end(.failure(error))
            }
        }
        let watch = start(on: connection) { end(.failure(ChannelError.ioOnClosedChannel)) }
        defer {
            watch.cancel()
            running.cancel()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let result = outcome.withLock { outcome in
                    if outcome.result == nil { outcome.waiting = continuation }
                    return outcome.result
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            end(.failure(CancellationError()))
        }
    }
}
