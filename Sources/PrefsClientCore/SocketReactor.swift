#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import PrefsKit
import Synchronization

/// Waits for sockets to become readable or writable on one thread of its own, so that async code
/// doing non-blocking I/O never blocks a thread of the concurrency pool: a task that would block
/// suspends in ``wait(for:events:timeout:)``, and this thread's `poll` resumes it when the socket
/// is ready. One for the process, started on first use; idle, it sleeps in `poll`.
final class SocketReactor: Sendable {
    /// The reactor every connection shares.
    static let shared = SocketReactor()

    /// A wait given up because its socket stayed not ready for its whole timeout.
    struct TimedOut: Error {}

    /// One suspended wait.
    private struct Waiter {
        let descriptor: Int32
        let events: Int16
        let deadline: ContinuousClock.Instant?
        let continuation: CheckedContinuation<Int16, any Error>
    }

    private struct State {
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        /// The write end of the pipe whose input ends the reactor's `poll`, so that it sees a new
        /// waiter; nil until the reactor's thread is started.
        var wakeUp: Int32?
    }

    private let state = Mutex(State())

    private init() {}

    /// Returns the events (`revents`) once `descriptor` has one of `events` — or is closed by its
    /// peer or in error (`POLLHUP`, `POLLERR`, which `poll` always reports). Throws ``TimedOut``
    /// when `timeout` passes first, and `CancellationError` when the task is cancelled first.
    /// The descriptor must stay open until this returns.
    func wait(for descriptor: Int32, events: Int16, timeout: Duration?) async throws -> Int16 {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int16, any Error>) in
                // Under the lock: either the cancellation handler has run (the flag is set) and
                // will not find this waiter, or it runs later and does.
                let refusal: (any Error)? = state.withLock { state in
                    if Task.isCancelled { return CancellationError() }
                    if state.wakeUp == nil {
                        do throws(PrefsError) { state.wakeUp = try start() } catch { return error }
                    }
                    state.waiters[id] = Waiter(descriptor: descriptor, events: events, deadline: deadline, continuation: continuation)
                    return nil
                }
                if let refusal { return continuation.resume(throwing: refusal) }
                wakeUp()
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Starts the reactor's thread; returns the write end of its wake-up pipe.
    private func start() throws(PrefsError) -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw PrefsError(.unreachable, "Cannot wait on prefsd's socket: \(String(cString: strerror(errno))).")
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        let wakeUps = ends[0]
        let thread = Thread { [self] in run(wakeUps: wakeUps) }
        thread.name = "prefsd client sockets"
        thread.start()
        return ends[1]
    }

    /// Ends the reactor's current `poll`.
    private func wakeUp() {
        guard let wakeUp = state.withLock({ $0.wakeUp }) else { return }
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up: nothing is lost.
        _ = write(wakeUp, &byte, 1)
    }

    /// The reactor's thread: polls every waiter's socket (and the wake-up pipe `wakeUps`),
    /// resumes those that are ready or out of time, forever.
    private func run(wakeUps: Int32) {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let (ids, descriptors, timeout) = state.withLock { state in
                var ids: [Int] = []
                var descriptors = [pollfd(fd: wakeUps, events: Int16(POLLIN), revents: 0)]
                var nearest: ContinuousClock.Instant?
                for (id, waiter) in state.waiters {
                    ids.append(id)
                    descriptors.append(pollfd(fd: waiter.descriptor, events: waiter.events, revents: 0))
                    if let deadline = waiter.deadline { nearest = min(nearest ?? deadline, deadline) }
                }
                return (ids, descriptors, nearest.map { Self.milliseconds(until: $0) } ?? -1)
            }
            var polled = descriptors
            // Should poll itself fail (out of memory), every waiter is told, rather than spinning.
            let failure: (any Error)? =
                poll(&polled, nfds_t(polled.count), timeout) < 0 && errno != EINTR
                ? PrefsError(.unreachable, "Waiting on prefsd's socket failed: \(String(cString: strerror(errno))).") : nil
            if polled[0].revents != 0 {
                while read(wakeUps, &drain, drain.count) > 0 {}
            }
            let now = ContinuousClock.now
            let ready = state.withLock { state in
                var ready: [(CheckedContinuation<Int16, any Error>, Result<Int16, any Error>)] = []
                for (index, id) in ids.enumerated() {
                    // A waiter already gone (cancelled) is skipped: its descriptor may since have
                    // been closed, and its number reused by another socket.
                    guard let waiter = state.waiters[id] else { continue }
                    let events = polled[index + 1].revents
                    if let failure {
                        state.waiters[id] = nil
                        ready.append((waiter.continuation, .failure(failure)))
                    } else if events != 0 {
                        state.waiters[id] = nil
                        ready.append((waiter.continuation, .success(events)))
                    } else if let deadline = waiter.deadline, deadline <= now {
                        state.waiters[id] = nil
                        ready.append((waiter.continuation, .failure(TimedOut())))
                    }
                }
                return ready
            }
            for (continuation, result) in ready { continuation.resume(with: result) }
        }
    }

    /// `poll`'s timeout for `deadline`: whole milliseconds, rounded up, at least 0.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }
}
