import PrefsKit

/// The transactions of a database with one writer (``WriteTransactions/exclusive(_:)``).
package protocol ExclusiveTransactions {
    /// Begins a transaction that holds off every other writer until it ends, and returns the
    /// changes committed after `revision` by anything else, in order — none while the engine is
    /// the database's only writer.
    ///
    /// - Parameter revision: The newest revision the engine has applied.
    /// - Returns: What was committed after `revision`, for the engine to take in first.
    /// - Throws: The database's error if the transaction cannot begin.
    func begin(after revision: Revision) throws -> ChangeLogPage

    /// Records `newestRevision` as the database's newest and commits.
    ///
    /// - Parameter newestRevision: The batch's last revision.
    /// - Throws: The database's error if the commit fails; nothing was stored then.
    func commit(newestRevision: Revision) throws

    /// How many rows the connection's statements have inserted, updated or deleted since it
    /// opened: a request that fails having changed none needs no savepoint to be undone.
    var rowsChanged: Int { get }
}
