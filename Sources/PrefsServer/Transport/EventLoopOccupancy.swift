import NIOCore
import Synchronization

/// How many of the server's connections each event loop carries, so that a write can tell
/// whether committing on its connection's own loop would hold back any other connection.
///
/// A write the store's writer is idle for commits faster on the thread that received it: no
/// hand-off to the writer's thread and back, two thread wake-ups fewer. But the commit blocks
/// that thread until it has synced, so only a connection alone on its loop commits there.
final class EventLoopOccupancy: Sendable {
    private let counts = Mutex<[ObjectIdentifier: Int]>([:])

    /// A connection on `loop` has opened.
    func connectionOpened(on loop: any EventLoop) {
        counts.withLock { $0[ObjectIdentifier(loop), default: 0] += 1 }
    }

    /// A connection on `loop` has closed.
    func connectionClosed(on loop: any EventLoop) {
        counts.withLock { counts in
            let key = ObjectIdentifier(loop)
            let remaining = (counts[key] ?? 1) - 1
            counts[key] = remaining > 0 ? remaining : nil
        }
    }

    /// Whether `loop` carries one connection at most (the caller's own).
    func isAlone(on loop: any EventLoop) -> Bool {
        counts.withLock { ($0[ObjectIdentifier(loop)] ?? 0) <= 1 }
    }
}
