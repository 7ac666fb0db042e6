import NIOCore
import Synchronization

/// How many of the server's connections that send requests each event loop carries, so that a
/// write can tell whether committing on its connection's own loop would hold back any other
/// connection's requests.
///
/// A write the store's writer is idle for commits faster on the thread that received it: no
/// hand-off to the writer's thread and back, two thread wake-ups fewer. But the commit blocks
/// that thread until it has synced, so only a connection alone on its loop commits there.
///
/// Decided by a measurement (release build as `Scripts/bench.sh` makes it, `prefs-bench --only
/// writes`, three runs each way in turns, 2 cores, `--durability full`): a lone client's writes
/// reach 0.81 / 0.89 / 0.83× raw SQLite's FULL transactions per second with the commit on its
/// loop, against 0.76 / 0.67 / 0.80× off it (the writer's thread, two hand-offs and wake-ups more)
/// — about 9% more writes a second on the loop. The loop is held for the commit's sync (2.4–2.6 ms
/// in a debug build), but it carries no other connection, so that delays no request already on
/// it: only one the acceptor places on it meanwhile, by one commit at most. With a second
/// connection on the loop, writes go to the writer's thread. So the commit stays here.
///
/// A watch's connection stops counting once it watches: it sends no more requests, and what the
/// loop writes to it are events of commits, which a commit on the loop holds back by no more than
/// it holds back its own answer. Counting watchers took a lone client's writes off its loop as soon
/// as one watcher shared it: with 10 000 idle watchers of other keys, each write cost 1.33–1.58×
/// the CPU it cost without them (the hand-off to the writer's thread and back), and 1.03–1.07× once
/// watchers stopped counting (one client's 5 000 writes, `--durability normal`).
final class EventLoopOccupancy: Sendable {
    private let counts = Mutex<[ObjectIdentifier: Int]>([:])

    /// A connection on `loop` has opened: it may send requests.
    func connectionOpened(on loop: any EventLoop) {
        counts.withLock { $0[ObjectIdentifier(loop), default: 0] += 1 }
    }

    /// A connection on `loop` sends no more requests: it has closed, or it watches.
    func connectionLeft(on loop: any EventLoop) {
        counts.withLock { counts in
            let key = ObjectIdentifier(loop)
            let remaining = (counts[key] ?? 1) - 1
            counts[key] = remaining > 0 ? remaining : nil
        }
    }

    /// Whether `loop` carries one connection that sends requests at most (the caller's own).
    func isAlone(on loop: any EventLoop) -> Bool {
        counts.withLock { ($0[ObjectIdentifier(loop)] ?? 0) <= 1 }
    }
}
