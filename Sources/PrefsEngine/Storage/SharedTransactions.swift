import PrefsKit

/// The transactions of a database other writers share (``WriteTransactions/shared(_:)``).
package protocol SharedTransactions {
    /// Begins a batch and returns the changes other writers committed after `revision`, in order.
    ///
    /// The batch holds off every other writer until it ends — unless it is `optimistic`: then it
    /// holds off no one (it may send nothing to the database before it commits, and return no
    /// changes), and ``commit(newestRevision:following:keysRead:)`` commits it after whatever
    /// others committed since `revision`, or throws ``StorageConflict`` if they changed something
    /// the batch read.
    ///
    /// - Parameters:
    ///   - revision: The newest revision the engine has applied.
    ///   - optimistic: Whether the batch runs alongside other writers rather than holding them off.
    /// - Returns: What others committed after `revision`, for the engine to take in first.
    /// - Throws: The database's error if the batch cannot begin.
    func begin(after revision: Revision, optimistic: Bool) throws -> ChangeLogPage

    /// Records `newestRevision` as the database's newest, telling the other writers, and commits.
    ///
    /// After an optimistic ``begin(after:optimistic:)``, the batch's changes follow `base`: if
    /// others committed after it, the batch goes after theirs.
    ///
    /// - Parameters:
    ///   - newestRevision: The batch's last revision, before any move.
    ///   - base: The revision whose state the batch worked on.
    ///   - keysRead: The preference keys the batch read, which others must not have changed.
    /// - Returns: How the batch's revisions moved past others' commits, and those commits; nil if
    ///   none came between.
    /// - Throws: ``StorageConflict`` if those others changed one of `keysRead` (or a draft the
    ///   batch read): nothing was written, and the batch may run again. The database's error if
    ///   the commit fails otherwise.
    func commit(newestRevision: Revision, following base: Revision, keysRead: KeysRead) throws -> CommitRebase?
}
