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
/// closed ends at once, never handed over.
final class WatchedConnection: Sendable {
    let connection: PostgresConnection
    /// What ends the wait under way, if any.
    private let waiting = Mutex<ThreadWait<PostgresQueryResult>?>(nil)
    /// Whether the writer closed the connection itself (else its closing is logged).
    private let closing = Atomic<Bool>(false)

    /// Watches `connection`; `logger` reports its closing unless ``close()`` closed it.
    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.waiting.withLock { $0 }?.end(.failure(ChannelError.ioOnClosedChannel))
            if !self.closing.load(ordering: .relaxed) {
                logger.warning("The writer's connection to PostgreSQL closed; the next write connects again.")
            }
        }
    }

    /// Whether the connection has closed.
    var isClosed: Bool { connection.isClosed }

    /// Runs `query` and waits for its answer; throws `ChannelError.ioOnClosedChannel` if the
    /// connection closes first — as it does once `alarm` rings, if it rings first: a statement
    /// left unanswered may still hold locks on the server, and ends with its session. Calls
    /// `handingOver` just before the statement is handed to the driver: a statement for a
    /// connection that had closed is never handed over, so it cannot have reached the server.
    /// Never on an event loop.
    func query(_ query: PostgresQuery, logger: Logger, until alarm: ClockAlarm? = nil, handingOver: () -> Void = {}) throws
        -> PostgresQueryResult
    {
        guard !connection.isClosed else { throw ChannelError.ioOnClosedChannel }
        let answer = ThreadWait<PostgresQueryResult>()
        waiting.withLock { $0 = answer }
        defer { waiting.withLock { $0 = nil } }
        alarm?.set { [self] in closeSoon() }
        defer { alarm?.clear() }
        handingOver()
        connection.query(query, logger: logger).whenComplete(answer.end)
        // Closed before the wait was set: the closing's callback found none to end.
        if connection.isClosed { answer.end(.failure(ChannelError.ioOnClosedChannel)) }
        return try answer.outcomeOnceEnded()
    }

    /// Starts closing the connection, which ends the wait under way.
    private func closeSoon() {
        closing.store(true, ordering: .relaxed)
        let _: EventLoopFuture<Void> = connection.close()
    }

    /// Closes the connection, and waits until it has.
    func close() {
        let closed = ThreadWait<Void>()
        closing.store(true, ordering: .relaxed)
        connection.close().whenComplete(closed.end)
        _ = try? closed.outcomeOnceEnded()
    }
}
