package import GRDB
import PrefsEngine

extension DatabasePool {
    /// Sets the writer connection's `PRAGMA synchronous` for `durability`, and checks that it
    /// took: `FULL` syncs the WAL at every commit, `NORMAL` only at checkpoints.
    ///
    /// It cannot be set in `Configuration.prepareDatabase`: a pool switches to WAL after that
    /// runs, and sets `synchronous = NORMAL` as it does.
    package func setSynchronous(for durability: StoreConfiguration.Durability) throws {
        let wanted = durability == .full ? 2 : 1
        let now = try writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(wanted)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard now == wanted else {
            throw DatabaseError(message: "PRAGMA synchronous = \(wanted) did not take (it is \(now.map(String.init) ?? "unknown"))")
        }
    }
}
