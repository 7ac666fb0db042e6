import Logging
import NIOCore
import PostgresNIO
import PrefsKit

/// The writer's link to PostgreSQL: its connection, made when a statement needs one and made again
/// after it was lost, and the waits for it on the writer's thread — each ends on the answer, on
/// the connection's closing, or on an alarm of the engine's injected clock (``ClockAlarm``).
/// What a batch sends, and when it may connect again, is ``PostgresWriteConnection``'s.
final class WriterLink {
    let location: PostgresLocation
    /// What measures the lost-commit recovery's deadline and pauses: the engine's clock.
    let clock: any Clock<Duration>
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private var connection: WatchedConnection?

    init(location: PostgresLocation, configuration: PostgresConnection.Configuration, clock: any Clock<Duration>, logger: Logger) {
        self.location = location
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// Whether a connection was made and not closed by ``close()`` (it may have closed since).
    var hasConnection: Bool { connection != nil }

    /// The connection, if it is open.
    var open: WatchedConnection? {
        guard let connection, !connection.isClosed else { return nil }
        return connection
    }

    /// Runs `query` on the open connection, or on a new one if `mayConnect` allows it (else throws
    /// `unavailable`), and waits for its rows — until `alarm` rings, if one is given. Calls
    /// `handingOver` just before the statement is handed to an open connection.
    @discardableResult
    func run(
        _ query: PostgresQuery, until alarm: ClockAlarm? = nil, mayConnect: () -> Bool = { true }, handingOver: () -> Void = {}
    ) throws -> [PostgresRow] {
        let connection: WatchedConnection
        if let open {
            connection = open
        } else {
            guard mayConnect() else {
                throw PostgresErrors.unreachable(location, detail: "the connection was lost during the transaction")
            }
            connection = try connect(until: alarm)
        }
        return try connection.query(query, logger: logger, until: alarm, handingOver: handingOver).rows
    }

    /// Makes a new connection, in place of any, and waits until it is made or fails — or `alarm`
    /// rings (the driver's own connect timeout ends it otherwise).
    private func connect(until alarm: ClockAlarm?) throws -> WatchedConnection {
        close()
        let made = ThreadWait<PostgresConnection>()
        let connecting = PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 0, logger: logger)
        connecting.whenComplete(made.end)
        alarm?.set { [location] in made.end(.failure(PostgresErrors.unreachable(location, detail: "no connection before the deadline"))) }
        defer { alarm?.clear() }
        let watched: WatchedConnection
        do {
            watched = WatchedConnection(try made.outcomeOnceEnded(), logger: logger)
        } catch {
            // Made after the alarm rang: no one will use it.
            connecting.whenSuccess { connection in let _: EventLoopFuture<Void> = connection.close() }
            throw error
        }
        connection = watched
        return watched
    }

    /// Whether `error` means PostgreSQL could not be reached, or the connection was lost.
    func isConnectionFailure(_ error: any Error) -> Bool {
        (PostgresErrors.translate(error, location: location) as? PrefsError)?.code == .unavailable
    }

    /// Closes the connection, if any (the next statement makes a new one).
    func close() {
        guard let connection else { return }
        self.connection = nil
        connection.close()
    }
}
