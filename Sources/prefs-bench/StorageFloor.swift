import Foundation
import PrefsClientCore
import PrefsEngine
import PrefsStore

/// The storage floor: SQLite alone storing exactly the rows the daemon's writes store — the
/// value, the change-log row with its author, and for keyed writes the reason and the
/// `Idempotency-Key`'s outcome row (``StoredWrites``) — at durability full, in transactions of
/// the size the daemon's group commit reached in the same run. What is left between the daemon
/// and it is the daemon's own work: HTTP, rules, cache, hub and answer.
enum StorageFloor {
    /// Writes per second, and this process's CPU µs per write.
    struct Figures {
        var writesPerSecond: Double
        var cpuMicrosecondsPerWrite: Double
    }

    /// Commits `writes` writes in transactions of `perBatch` (at least one), keyed or not, on a
    /// new database at durability full.
    static func measure(writes: Int, perBatch: Int, keyed: Bool) throws -> Figures {
        try StoredWrites.withNewStorage { storage in
            let perBatch = max(perBatch, 1)
            let batches = max(writes / perBatch, 1)
            // Keys are made before the clock runs: the client makes them, not the daemon.
            let keys = keyed ? (0..<batches * perBatch).map { _ in IdempotencyKey.make() } : nil
            var stored = StoredWrites(perBatch: perBatch, attributed: true)
            let start = ContinuousClock.now
            let cpu = try ProcessMeter.ownCPUSeconds { try stored.commit(batches: batches, in: storage, outcomeKeys: keys) }
            let seconds = (ContinuousClock.now - start).seconds
            let count = Double(batches * perBatch)
            return Figures(writesPerSecond: count / seconds, cpuMicrosecondsPerWrite: cpu / count * 1e6)
        }
    }
}
