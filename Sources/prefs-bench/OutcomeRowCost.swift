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
    static func microsecondsPerRow(rounds: Int = 3, batches: Int, perBatch: Int = 16) throws -> Double {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-outcomes-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLiteStorage(path: folder.appending(path: "prefs.sqlite").path, durability: .full)
        defer { storage.close() }
        var writes = Writes(perBatch: perBatch)
        var (without, with) = (0.0, 0.0)
        for _ in 0..<rounds {
            // Keys are made before the clock runs: the client makes them, not the daemon.
            let keys = (0..<batches * perBatch).map { _ in IdempotencyKey.make() }
            without += try cpuSeconds { try writes.commit(batches: batches, in: storage, outcomeKeys: nil) }
            with += try cpuSeconds { try writes.commit(batches: batches, in: storage, outcomeKeys: keys) }
        }
        return (with - without) / Double(rounds * batches * perBatch) * 1e6
    }

    /// The benchmark's keyed writes, revision after revision, as the writer stores them.
    private struct Writes {
        let perBatch: Int
        var revision: Revision = 0

        /// Commits `batches` transactions of ``perBatch`` writes each; with `outcomeKeys`, each
        /// write's outcome too, under its key.
        mutating func commit(batches: Int, in storage: SQLiteStorage, outcomeKeys: [String]?) throws {
            try storage.withWriter { connection in
                guard case .exclusive(let transactions) = connection.transactions else { return }
                for batch in 0..<batches {
                    let base = revision
                    _ = try transactions.begin(after: base)
                    for index in 0..<perBatch {
                        revision += 1
                        let (key, scope, value) = ("bench.c\(index)", try ScopePath("/s\(revision % 10)"), JSONValue.integer(revision))
                        try connection.upsertValue(key: key, scope: scope, value: value, revision: revision)
                        try connection.appendChange(
                            LoggedChange(
                                event: ChangeEvent(revision: revision, kind: .set, key: key, scope: scope, value: value),
                                oldValue: "\(revision - 1)", oldRevision: revision - 1, time: Date().timeIntervalSince1970))
                        guard let outcomeKeys else { continue }
                        try connection.storeOutcome(
                            StoredOutcome(
                                key: outcomeKeys[batch * perBatch + index], fingerprint: String(repeating: "a3", count: 32),
                                refused: false, body: "{\"revision\":\(revision)}", baseRevision: base,
                                createdAt: Date().timeIntervalSince1970))
                    }
                    try transactions.commit(newestRevision: revision)
                }
            }
        }
    }

    /// The CPU seconds this process spends running `body`.
    private static func cpuSeconds(_ body: () throws -> Void) throws -> Double {
        let meter = ProcessMeter(pid: getpid())
        let before = meter.cpuSeconds
        try body()
        return meter.cpuSeconds - before
    }
}
