import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore

/// The rows the benchmark's keyed writes store, committed straight through the daemon's own
/// write connection (``SQLiteStorage``) as its group-commit writer commits them, batch after
/// batch, revision after revision: each write's value row and its change-log row — with the
/// author, agent and reason a daemon records, if `attributed` — and, given keys, its
/// `Idempotency-Key`'s outcome row. No HTTP, rules, cache, hub or answer.
struct StoredWrites {
    /// How many writes each transaction carries.
    let perBatch: Int
    /// Whether each change-log row names an author, an agent and a reason.
    let attributed: Bool
    private var revision: Revision = 0

    /// Runs `body` with the daemon's storage on a new database at durability full, in a temp
    /// folder removed afterwards.
    static func withNewStorage<T>(_ body: (SQLiteStorage) throws -> T) throws -> T {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-stored-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLiteStorage(path: folder.appending(path: "prefs.sqlite").path, durability: .full)
        defer { storage.close() }
        return try body(storage)
    }

    /// Writes of `perBatch` a transaction, attributed or not.
    init(perBatch: Int, attributed: Bool) {
        self.perBatch = perBatch
        self.attributed = attributed
    }

    /// Commits `batches` transactions of ``perBatch`` writes each; with `outcomeKeys` (one per
    /// write), each write's outcome too, under its key.
    mutating func commit(batches: Int, in storage: SQLiteStorage, outcomeKeys: [String]?) throws {
        let author = attributed ? ChangeAuthor(name: "bench", agent: "prefs-bench/1 (prefs-bench[1])") : nil
        let reason = attributed ? "benchmark" : nil
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
                            oldValue: "\(revision - 1)", oldRevision: revision - 1, time: Date().timeIntervalSince1970,
                            author: author, reason: reason))
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
