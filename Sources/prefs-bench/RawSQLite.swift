import Foundation
import GRDB
import PrefsEngine
import PrefsStore

/// The baseline: single-row upsert transactions straight into SQLite (WAL) through GRDB, in
/// this process, at the same durability as the daemon.
enum RawSQLite {
    static func upsertsPerSecond(count: Int, durability: StoreConfiguration.Durability) throws -> Double {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-raw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try DatabasePool(path: folder.appending(path: "raw.sqlite").path)
        try pool.setSynchronous(for: durability)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE kv (key TEXT NOT NULL, scope TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, scope)) WITHOUT ROWID")
        }
        let start = ContinuousClock.now
        for index in 0..<count {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO kv VALUES (?, ?, ?) ON CONFLICT (key, scope) DO UPDATE SET value = excluded.value",
                    arguments: ["bench.k\(index % 100)", "/s", "\(index)"])
            }
        }
        return Double(count) / (ContinuousClock.now - start).seconds
    }
}
