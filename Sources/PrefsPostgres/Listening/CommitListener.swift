import Logging
import PostgresNIO
import PrefsKit
import Synchronization

/// Wakes a host when other hosts commit: it listens on a connection of its own for the
/// notification every commit sends (`NOTIFY` in the committing transaction, carrying only the
/// sender and the new revision — never the data), and wakes it as well each time it starts
/// listening and on a periodic safety tick. The change log stays the truth: a lost notification
/// or connection delays a change by at most a tick, and loses nothing.
///
/// While the host's own writer commits steadily, notifications only repeat what it learns anyway
/// (each of its commits takes in what others committed before it), yet each costs PostgreSQL a
/// signal and a message to every listening connection, and the host a wake-up. So once a run of
/// notifications has all come while the writer was committing steadily, the listener stops
/// listening (`UNLISTEN`), and listens again — reading whatever came meanwhile — as soon as the
/// writer has not committed for a while (`steadyWriter`, 5 ms by default).
final class CommitListener: Sendable {
    /// The channel commits are announced on.
    static let channel = "prefsd_changes"
    /// How many notifications in a row, each while the writer commits steadily, stop the listener.
    static let redundantRun = 8

    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Starts listening; `wake` is called from any thread, with the revision a notification
    /// announces (nil when listening starts, and on a tick). Notifications this host sent
    /// (`hostID`) do not wake it: it has taken its own commits in already. `writerActivity` tells
    /// when the host's writer last committed: it commits steadily while it did so within
    /// `steadyWriter`.
    init(
        configuration: PostgresConnection.Configuration, hostID: String, tick: Duration, writerActivity: WriterActivity,
        steadyWriter: Duration, logger: Logger, wake: @escaping @Sendable (_ announced: Revision?) -> Void
    ) {
        let listening = Task {
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                    defer { Task { try? await connection.close() } }
                    pause = .milliseconds(50)
                    // A `LISTEN` handed to the connection as it closes is never answered: the
                    // connection's closing ends the listening instead.
                    try await ClosedConnectionWatch.run(on: connection) {
                        while !Task.isCancelled {
                            try await Self.listen(
                                on: connection, hostID: hostID, writerActivity: writerActivity, steadyWriter: steadyWriter, wake: wake)
                            while writerActivity.committed(within: steadyWriter) {
                                try await Task.sleep(for: steadyWriter)
                            }
                        }
                    }
                } catch {
                    logger.debug("The commit listener lost PostgreSQL, retrying: \(error)")
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
            }
        }
        let ticking = Task {
            while (try? await Task.sleep(for: tick)) != nil { wake(nil) }
        }
        tasks.withLock { $0 = [listening, ticking] }
    }

    /// Listens on `connection` until a run of ``redundantRun`` notifications has come while the
    /// writer committed steadily (then stops listening, and returns), or the connection is lost
    /// (and throws).
    private static func listen(
        on connection: PostgresConnection, hostID: String, writerActivity: WriterActivity, steadyWriter: Duration,
        wake: @escaping @Sendable (_ announced: Revision?) -> Void
    ) async throws {
        try await connection.listen(on: channel) { notifications in
            // Subscribed: whatever committed while there was no subscription is read now.
            wake(nil)
            var redundant = 0
            for try await notification in notifications {
                if !notification.payload.hasPrefix(hostID + " ") {
                    wake(notification.payload.split(separator: " ").last.flatMap { Revision($0) })
                }
                redundant = writerActivity.committed(within: steadyWriter) ? redundant + 1 : 0
                if redundant == redundantRun { return }
            }
            throw ListeningEnded()
        }
    }

    /// Stops listening.
    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    /// The notifications ended without an error: the connection is gone.
    private struct ListeningEnded: Error {}
}
