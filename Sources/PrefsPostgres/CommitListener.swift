import Logging
import PostgresNIO
import PrefsKit
import Synchronization

/// Wakes a host when other hosts commit: it listens on a connection of its own for the
/// notification every commit sends (`NOTIFY` in the committing transaction, carrying only the
/// sender and the new revision — never the data), and wakes it as well each time that connection
/// is made again and on a periodic safety tick. The change log stays the truth: a lost
/// notification or connection delays a change by at most a tick, and loses nothing.
final class CommitListener: Sendable {
    /// The channel commits are announced on.
    static let channel = "prefsd_changes"

    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Starts listening; `wake` is called from any thread, with the revision a notification
    /// announces (nil for a reconnection or a tick). Notifications this host sent (`hostID`) do
    /// not wake it: it has taken its own commits in already.
    init(
        configuration: PostgresConnection.Configuration, hostID: String, tick: Duration, logger: Logger,
        wake: @escaping @Sendable (_ announced: Revision?) -> Void
    ) {
        let listening = Task {
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                    defer { Task { try? await connection.close() } }
                    pause = .milliseconds(50)
                    try await connection.listen(on: Self.channel) { notifications in
                        // Subscribed: whatever committed while there was no subscription is read now.
                        wake(nil)
                        for try await notification in notifications where !notification.payload.hasPrefix(hostID + " ") {
                            wake(notification.payload.split(separator: " ").last.flatMap { Revision($0) })
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

    /// Stops listening.
    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }
}
