import Dispatch
import PrefsEngine

/// The thread the engine's writes run on, and its connection: each group commit waits for the
/// database here, never on an event loop (whose threads the driver itself needs) nor on the
/// concurrency pool.
final class PostgresWriter: @unchecked Sendable {
    // @unchecked: `connection` is used only on `queue`, one call at a time.
    private let queue = DispatchQueue(label: "prefsd.postgres.writer")
    private let connection: PostgresWriteConnection

    init(connection: PostgresWriteConnection) {
        self.connection = connection
    }

    /// Runs `body` with the connection on the writer's thread, waiting for it.
    func sync<T>(_ body: (PostgresWriteConnection) throws -> T) rethrows -> T {
        try queue.sync { try body(connection) }
    }

    /// Runs `body` with the connection on the writer's thread, and returns what it returns once
    /// it has.
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresWriteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body(self.connection) }) }
        }
    }

    /// Runs `body` with the connection on the writer's thread, soon.
    func async(_ body: @escaping @Sendable (any WriteConnection) -> Void) {
        queue.async { body(self.connection) }
    }

    /// Closes the connection once the writes queued before have run.
    func close() {
        queue.sync { connection.close() }
    }
}
