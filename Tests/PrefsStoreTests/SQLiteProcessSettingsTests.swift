import Foundation
import GRDB
import GRDBSQLite
import PrefsStore
import Testing

/// SQLite's memory statistics, turned off as prefsd does at start: in a process of its own (an
/// exit test), since the test process has initialized SQLite long before.
@Suite("Store: SQLite's process-wide settings")
struct SQLiteProcessSettingsTests {
    @Test func memoryStatisticsTurnOffBeforeADatabaseOpens() async {
        await #expect(processExitsWith: .success) {
            guard SQLiteProcessSettings.turnOffMemoryStatistics() else { exit(1) }
            let queue = try DatabaseQueue()
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES (hex(randomblob(100000)))")
            }
            // Counted, SQLite's memory in use would be well over the row's 200 kB.
            var (current, highest): (Int64, Int64) = (0, 0)
            guard sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK, highest == 0 else { exit(2) }
            // Once SQLite is initialized, the setting can no longer change.
            guard !SQLiteProcessSettings.turnOffMemoryStatistics() else { exit(3) }
            exit(0)
        }
    }

    /// The same steps in this process, where SQLite has counted from the start: the count the
    /// exit test expects to be zero is not zero when the statistics are on.
    @Test func memoryIsCountedWhenStatisticsAreOn() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES (hex(randomblob(100000)))")
        }
        var (current, highest): (Int64, Int64) = (0, 0)
        #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK)
        #expect(highest > 200_000)
        #expect(!SQLiteProcessSettings.turnOffMemoryStatistics(), "too late in a process that has opened a database")
    }
}
