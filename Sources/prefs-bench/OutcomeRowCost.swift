#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsClientCore
import PrefsEngine
import PrefsKit
import PrefsStore

/// What keeping an idempotent request's outcome costs SQLite by itself: the least an
/// `Idempotency-Key` can add to a write, before the daemon reads the header, looks the key up or
/// makes the answer it stores.
///
/// Batches of writes go through the daemon's own write connection (``SQLiteStorage``) as its
/// writer commits them, at durability full — each write a value row and a change-log row, as a
/// keyed write of the benchmark's load is — once without their outcomes and once with, in turns:
/// the difference is what the outcome rows add to transactions that commit and sync anyway.
enum OutcomeRowCost {
    /// CPU µs this process spends a stored outcome, over `rounds` turns of `batches` batches of
    /// `perBatch` writes each, without outcomes and with.
    static func microsecondsPerRow(rounds: Int = 3, batches: Int, perBatch: Int) throws -> Double {
        try StoredWrites.withNewStorage { storage in
            var writes = StoredWrites(perBatch: perBatch, attributed: false)
            var (without, with) = (0.0, 0.0)
            for _ in 0..<rounds {
                // Keys are made before the clock runs: the client makes them, not the daemon.
                let keys = (0..<batches * perBatch).map { _ in IdempotencyKey.make() }
                without += try ProcessMeter.ownCPUSeconds { try writes.commit(batches: batches, in: storage, outcomeKeys: nil) }
                with += try ProcessMeter.ownCPUSeconds { try writes.commit(batches: batches, in: storage, outcomeKeys: keys) }
            }
            return (with - without) / Double(rounds * batches * perBatch) * 1e6
        }
    }
}
