import Synchronization

/// Upkeep a batch runs in its transaction, dropping what has outlived a retention — the outcomes
/// of idempotent requests (``StoreConfiguration/idempotencyRetention``), blobs' uploads left
/// alone (``StoreConfiguration/blobUploadRetention``): at most once a minute (or once a
/// retention, if that is shorter), so that a commit rarely pays for it.
final class RetentionPruning: Sendable {
    private let retention: Double
    private let interval: Double
    /// Drops, on the batch's connection, what was stored before the time given (seconds since 1970).
    private let prune: @Sendable (_ connection: any WriteConnection, _ before: Double) throws -> Void
    /// When the last pruning ran, in seconds since 1970.
    private let lastPruned = Mutex<Double>(0)

    /// Pruning with `prune` what is older than `retention`.
    init(retention: Duration, prune: @escaping @Sendable (_ connection: any WriteConnection, _ before: Double) throws -> Void) {
        let (seconds, attoseconds) = retention.components
        self.retention = Double(seconds) + Double(attoseconds) / 1e18
        interval = min(60, self.retention)
        self.prune = prune
    }

    /// Prunes in `batch`'s transaction, if it is time.
    func pruneIfDue(_ batch: WriteBatch) throws {
        let due = lastPruned.withLock { last in
            guard batch.time - last >= interval else { return false }
            last = batch.time
            return true
        }
        guard due else { return }
        try prune(batch.connection, batch.time - retention)
    }
}
