import Logging
import PostgresNIO
import Synchronization

/// The connections reads go through: postgres-nio's `PostgresClient`, made anew when it stops
/// handing out connections.
///
/// After PostgreSQL has gone away and come back, the client's pool can be left with its requests
/// queued and no connection attempt on the way: every read would wait forever, and a host would
/// never again take in what other hosts commit. So a read whose connection does not come within
/// ``leaseWait`` fails `unavailable`, and the pool is replaced by a new one, whose first read
/// connects afresh. A read that has its connection runs as long as its statements do.
final class ReadingPool: Sendable {
    /// How long a read waits for a connection before the pool counts as stuck.
    static let leaseWait = Duration.seconds(10)

    private let configuration: PostgresClient.Configuration
    private let location: PostgresLocation
    private let logger: Logger
    private let leaseWait: Duration
    /// The client reads use, and the task that runs it; nil once closed.
    private let current: Mutex<Client?>

    private struct Client {
        let client: PostgresClient
        let running: Task<Void, Never>
    }

    /// Starts a pool of connections made with `configuration` to the database at `location`.
    init(configuration: PostgresClient.Configuration, location: PostgresLocation, leaseWait: Duration = leaseWait, logger: Logger) {
        self.configuration = configuration
        self.location = location
        self.leaseWait = leaseWait
        self.logger = logger
        current = Mutex(Self.start(configuration, logger: logger))
    }

    private static func start(_ configuration: PostgresClient.Configuration, logger: Logger) -> Client {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return Client(client: client, running: Task { await client.run() })
    }

    /// Runs `read` on a connection of the pool, once it has one.
    ///
    /// The read runs in a task of its own, which this call does not wait for once ``leaseWait``
    /// is over without a connection: the driver's wait for one does not always end when it is
    /// cancelled. Once leased, the read ends when its connection closes under it
    /// (``ClosedConnectionWatch``): a statement handed to a connection as it closes is never
    /// answered.
    ///
    /// - Throws: `unavailable` when no connection came within ``leaseWait`` (the pool is replaced
    ///   then), when the connection closed during the read, or once the pool is closed; and what
    ///   `read` throws.
    func withConnection<T: Sendable>(_ read: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        guard let client = current.withLock({ $0?.client }) else {
            throw PostgresErrors.unreachable(location, detail: "the store is closed", work: .reading)
        }
        let attempt = ReadAttempt<T>()
        let reading = Task { [location] in
            do {
                attempt.end(
                    .success(
                        try await client.withConnection { connection in
                            // A read already answered `unavailable` does not run late.
                            guard attempt.leased() else { throw CancellationError() }
                            do {
                                return try await ClosedConnectionWatch.run(on: connection) { try await read(connection) }
                            } catch ChannelError.ioOnClosedChannel {
                                throw PostgresErrors.unreachable(location, detail: "the connection closed during the read", work: .reading)
                            }
                        }))
            } catch {
                attempt.end(.failure(error))
            }
        }
        let deadline = Task { [leaseWait, location] in
            try await Task.sleep(for: leaseWait)
            let error = PostgresErrors.unreachable(
                location, detail: "no connection to read on came within \(leaseWait)", work: .reading)
            guard attempt.endUnlessLeased(.failure(error)) else { return }
            replace(client)
            reading.cancel()
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { attempt.wait($0) }
        } onCancel: {
            reading.cancel()
        }
    }

    /// Replaces `stuck` with a new client, unless that happened already. The old one closes once
    /// the reads it gave a connection to have had ``leaseWait`` more to end; those still waiting
    /// for one end by themselves.
    private func replace(_ stuck: PostgresClient) {
        let replaced = current.withLock { current -> Task<Void, Never>? in
            guard let running = current, running.client === stuck else { return nil }
            current = Self.start(configuration, logger: logger)
            return running.running
        }
        guard let replaced else { return }
        logger.warning("No connection to read on came from the pool within \(leaseWait): it is replaced by a new one.")
        Task { [leaseWait] in
            try? await Task.sleep(for: leaseWait)
            replaced.cancel()
        }
    }

    /// Closes the pool: its connections close, and reads fail from now on.
    func close() {
        current.withLock { current in
            defer { current = nil }
            return current?.running
        }?.cancel()
    }

    /// One read's outcome, which comes once: from the read, or from the end of the wait for its
    /// connection — whichever is first.
    private final class ReadAttempt<T: Sendable>: Sendable {
        private struct State {
            var waiting: CheckedContinuation<T, any Error>?
            var outcome: Result<T, any Error>?
            var leased = false
        }

        private let state = Mutex(State())

        /// The read has its connection: the wait for one can no longer end it. Returns false if
        /// the read has ended already.
        func leased() -> Bool {
            state.withLock { state in
                state.leased = state.outcome == nil
                return state.leased
            }
        }

        /// Ends the read with `outcome`, unless it has ended.
        func end(_ outcome: Result<T, any Error>) {
            _ = end(outcome, unlessLeased: false)
        }

        /// Ends the read with `outcome` unless it has its connection or has ended; returns whether it did.
        func endUnlessLeased(_ outcome: Result<T, any Error>) -> Bool {
            end(outcome, unlessLeased: true)
        }

        private func end(_ outcome: Result<T, any Error>, unlessLeased: Bool) -> Bool {
            let waiting = state.withLock { state -> CheckedContinuation<T, any Error>?? in
                guard state.outcome == nil, !(unlessLeased && state.leased) else { return nil }
                state.outcome = outcome
                defer { state.waiting = nil }
                return .some(state.waiting)
            }
            guard let waiting else { return false }
            waiting?.resume(with: outcome)
            return true
        }

        /// Resumes `continuation` with the outcome, at once if it has come.
        func wait(_ continuation: CheckedContinuation<T, any Error>) {
            let outcome = state.withLock { state in
                if state.outcome == nil { state.waiting = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
