import Dispatch
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The writer's connection, whose statements — one at a time, each waited for on the writer's
/// thread — end as soon as the connection closes, answered or not.
///
/// The driver never answers a statement handed to its connection as it closes
/// (``ClosedConnectionWatch``). The writer sends statement after statement on one connection for
/// as long as it lasts, so rather than a watch per statement — a timer set and cancelled on the
/// event loop, two wake-ups of its thread for each round trip — one callback on the connection's
/// closing, made with it, ends the wait under way; and a statement sent once the connection had
/// closed ends at once.
final class WatchedConnection: Sendable {
    let connection: PostgresConnection
    /// What ends the wait under way, if any.
    private let waiting = Mutex<Answer?>(nil)

    init(_ connection: PostgresConnection) {
        self.connection = connection
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.waiting.withLock { $0 }?.end(.failure(ChannelError.ioOnClosedChannel))
        }
    }

    /// Whether the connection has closed.
    var isClosed: Bool { connection.isClosed }

    /// Runs `query` and waits for its answer; throws `ChannelError.ioOnClosedChannel` if the
    /// connection closes first. Never on an event loop.
    func query(_ query: PostgresQuery, logger: Logger) throws -> PostgresQueryResult {
        let answer = Answer()
        waiting.withLock { $0 = answer }
        defer { waiting.withLock { $0 = nil } }
        connection.query(query, logger: logger).whenComplete(answer.end)
        // Closed before the wait was set: the closing's callback found none to end.
        if connection.isClosed { answer.end(.failure(ChannelError.ioOnClosedChannel)) }
        return try answer.wait()
    }

    /// Closes the connection, and waits until it has.
    func close() {
        _ = try? connection.close().wait()
    }

    /// One statement's answer: from the driver, or from the connection's closing — whichever
    /// comes first.
    final class Answer: Sendable {
        private let outcome = Mutex<Result<PostgresQueryResult, any Error>?>(nil)
        private let ended = DispatchSemaphore(value: 0)

        /// Ends the wait with `result`, unless it has ended.
        @Sendable func end(_ result: Result<PostgresQueryResult, any Error>) {
            let first = outcome.withLock { outcome in
                guard outcome == nil else { return false }
                outcome = result
                return true
            }
            if first { ended.signal() }
        }

        /// Waits for the outcome.
        func wait() throws -> PostgresQueryResult {
            ended.wait()
            return try outcome.withLock { $0! }.get()
        }
    }
}
