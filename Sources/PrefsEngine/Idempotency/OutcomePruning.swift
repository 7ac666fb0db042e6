import PrefsKit
import Synchronization

/// When a batch drops the outcomes of idempotent requests older than the retention
/// (``StoreConfiguration/idempotencyRetention``): at most once a minute (or once a retention, if
/// that is shorter), so that a commit rarely pays for it.
final class OutcomePruning: Sendable {
    private let retention: Double
    private let interval: Double
    /// When the last pruning ran, in seconds since 1970.
    private let lastPruned = Mutex<Double>(0)

    init(retention: Duration) {
        let (seconds, attoseconds) = retention.components
        self.retention = Double(seconds) + Double(attoseconds) / 1e18
        interval = min(60, self.retention)
    }

    /// Prunes in `batch`'s transaction, if it is time.
    func pruneIfDue(_ batch: WriteBatch) throws {
        let due = lastPruned.withLock { last in
            guard batch.time - last >= interval else { return false }
            last = batch.time
            return true
        }
        guard due else { return }
        try batch.connection.pruneOutcomes(storedBefore: batch.time - retention)
    }
}
