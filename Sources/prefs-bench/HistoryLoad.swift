import Foundation
import GRDB

/// Fills a daemon's change log, times a key's history and the audit log's first page over it,
/// and measures what a logged change costs on disk.
enum HistoryLoad {
    struct Figures {
        /// The log's size when the histories and the audit log were read.
        var logSize: Int
        /// Medians of 50 requests each: the history of a key with 1% of the changes, and of one
        /// changed once, before all the others.
        var historyMilliseconds: Double
        var rareHistoryMilliseconds: Double
        var readMilliseconds: Double
        var firstPageMilliseconds: Double
        var prefixPageMilliseconds: Double
        /// The change table's bytes per row; the preference table's per value.
        var bytesPerChange: Double
        var bytesPerValue: Double
        /// The daemon's start to ready, again, on the full log.
        var coldStartMilliseconds: Double
    }

    /// The key whose history is read: 1% of the changes, at the followed scope, its ancestors
    /// and a sibling.
    static let key = "bench.history"
    static let scopes = ["/", "/accounts", "/accounts/alice", "/accounts/alice/threads/1", "/accounts/bob"]
    /// A key set once, before every other change: its history reads the whole log.
    static let rareKey = "bench.rare"

    /// Writes ``rareKey``, then `changes` changes in batches of 1000 (5000 keys at 50 scopes, and ``key``),
    /// timing the histories and the audit log at the end; then stops the daemon, reads its
    /// file's page counts and times its start again on that file (`restart`).
    static func measure(_ daemon: BenchDaemon, restartedBy restart: (URL) throws -> BenchDaemon, changes: Int) throws -> Figures {
        let connection = try daemon.connection()
        var figures = Figures(
            logSize: changes, historyMilliseconds: 0, rareHistoryMilliseconds: 0, readMilliseconds: 0,
            firstPageMilliseconds: 0, prefixPageMilliseconds: 0, bytesPerChange: 0, bytesPerValue: 0, coldStartMilliseconds: 0)
        guard try connection.request("PUT", "/v1/prefs/\(rareKey)?scope=/accounts", body: "1") == 200 else {
            throw BenchError("the rare key's write failed")
        }
        for batch in 0..<(changes / 1000) {
            let operations = (0..<1000).map { index -> String in
                let value = batch * 1000 + index
                if index % 100 == 0 {
                    return #"{"op":"set","key":"\#(key)","scope":"\#(scopes[(value / 100) % scopes.count])","value":\#(value)}"#
                }
                return #"{"op":"set","key":"log.k\#(value % 5000)","scope":"/accounts/a\#(value % 50)","value":\#(value)}"#
            }
            let status = try connection.request("POST", "/v1/prefs:batch", body: #"{"operations":[\#(operations.joined(separator: ","))]}"#)
            guard status == 200 else { throw BenchError("a batch answered \(status)") }
        }
        figures.historyMilliseconds = try median(connection, "/v1/prefs/\(key)/history?scope=/accounts/alice/threads/1&limit=20")
        figures.rareHistoryMilliseconds = try median(connection, "/v1/prefs/\(rareKey)/history?scope=/accounts/alice&limit=20")
        figures.readMilliseconds = try median(connection, "/v1/prefs/\(key)?scope=/accounts/alice/threads/1")
        figures.firstPageMilliseconds = try median(connection, "/v1/changes")
        figures.prefixPageMilliseconds = try median(connection, "/v1/changes?prefix=bench.&scope=/accounts/alice")
        daemon.stop(removing: false)
        defer { try? FileManager.default.removeItem(at: daemon.folder) }
        let database = try DatabaseQueue(path: daemon.folder.appending(path: "prefs.sqlite").path)
        try database.read { db in
            func bytes(_ names: [String]) throws -> Double {
                let list = names.map { "'\($0)'" }.joined(separator: ",")
                return try Double.fetchOne(db, sql: "SELECT sum(pgsize) FROM dbstat WHERE name IN (\(list))") ?? 0
            }
            let (logged, stored) = (
                try Double.fetchOne(db, sql: "SELECT count(*) FROM change") ?? 1,
                try Double.fetchOne(db, sql: "SELECT count(*) FROM preference") ?? 1
            )
            figures.bytesPerChange = try bytes(["change"]) / logged
            figures.bytesPerValue = try bytes(["preference"]) / stored
        }
        try database.close()
        let again = try restart(daemon.folder)
        figures.coldStartMilliseconds = again.startupSeconds * 1000
        again.stop(removing: false)
        return figures
    }

    /// The median milliseconds of 50 `GET target`s.
    private static func median(_ connection: BenchConnection, _ target: String) throws -> Double {
        var times: [Double] = []
        for _ in 0..<50 {
            let start = ContinuousClock.now
            let status = try connection.request("GET", target)
            guard status == 200 else { throw BenchError("GET \(target) answered \(status)") }
            times.append((ContinuousClock.now - start).seconds * 1000)
        }
        return times.sorted()[times.count / 2]
    }
}
