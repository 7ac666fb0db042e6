import NIOCore
import Synchronization

/// How many of the server's connections each event loop carries, so that a write can tell
/// whether committing on its connection's own loop would hold back any other connection.
///
/// A write the store's writer is idle for commits faster on the thread that received it: no
/// hand-off to the writer's thread and back, two thread wake-ups fewer. But the commit blocks
/// that thread until it has synced, so only a connection alone on its loop commits there.
///
/// Measured for issue 30 (debug build, 2 cores at load ~15, `--durability full`; one client
/// sending 2000 PUTs in turn on one connection, three rounds each way, the loop's time taken as
/// that of starting the write's delivery): committing on the loop holds it 2.4–2.6 ms a write
/// (max 22–92 ms) against 46–66 µs off it, and the lone writer was not faster for it (mean
/// 2.8–3.4 ms, p50 2.0–2.9 ms, against 1.5–2.5 ms and 0.5–1.8 ms off the loop). Kept, for now:
/// the loop carries no other connection, so the time it is held delays no request already on it
/// — only one the acceptor places on it during the commit, by one commit at most — and the
/// release measurement behind it (docs/benchmarks.md) outweighs a debug one on a loaded machine.
/// A release run on a quiet machine should decide again; moving the commit off the loop means
/// dropping this count and answering the raw-bytes tests' writes from the writer's thread.
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
