import Dispatch
import Synchronization

/// When this host's writer last took in what other hosts had committed — each of its commits does
/// (``PostgresWriteConnection``) — so that the ``CommitListener`` can tell when notifications only
/// repeat what the writer learns anyway.
final class WriterActivity: Sendable {
    /// `DispatchTime.uptimeNanoseconds` of the last commit, 0 before the first.
    private let lastCommit = Atomic<UInt64>(0)

    /// Records a commit that has taken in every change other hosts committed before it.
    func committed() {
        lastCommit.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// Whether the writer committed within the last `interval`.
    func committed(within interval: Duration) -> Bool {
        let last = lastCommit.load(ordering: .relaxed)
        return last > 0 && Double(DispatchTime.now().uptimeNanoseconds - last) <= interval / .nanoseconds(1)
    }
}
