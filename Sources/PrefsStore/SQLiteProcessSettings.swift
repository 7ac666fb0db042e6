internal import GRDBSQLite
internal import SQLiteSettings

/// SQLite's settings for the whole process, which hold only if made before any database opens.
package enum SQLiteProcessSettings {
    /// Turns SQLite's memory statistics off, for a process where nothing reads them (prefsd):
    /// SQLite then counts none of its allocations, each of which takes a process-wide mutex to be
    /// counted — 1 to 2 µs of a keyed write's CPU in prefsd's profile. Returns whether it took
    /// effect: false once SQLite has been initialized (a database has opened), and nothing changes.
    @discardableResult
    package static func turnOffMemoryStatistics() -> Bool {
        prefsd_sqlite3_turn_off_memory_statistics() == SQLITE_OK
    }
}
