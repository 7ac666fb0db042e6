#include <sqlite3.h>

/// Turns off SQLite's memory statistics for the process: `sqlite3_config` is variadic, which
/// Swift cannot call. SQLite then takes no global mutex to count each of its allocations. Takes
/// effect only before SQLite is initialized (before any database opens): returns SQLITE_OK then,
/// SQLITE_MISUSE after.
static inline int prefsd_sqlite3_turn_off_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
