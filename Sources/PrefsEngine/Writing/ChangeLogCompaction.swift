import PrefsKit

/// When the change log drops its oldest rows: it keeps at least `--retain-changes` of them, and
/// drops the older ones in steps of `retain / 32` rather than at every commit — that would cost
/// each commit the two extra pages a compaction writes (the state row and the log's first leaf),
/// and with `--durability full` every page is part of the sync a client's acknowledgement waits
/// for.
enum ChangeLogCompaction {
    /// Compacts the log once it holds more than `retain + retain / 32` changes up to `revision`,
    /// and returns the oldest revision it then holds (`oldest`, the one it held before, if it did
    /// not compact).
    static func compact(_ connection: any WriteConnection, revision: Revision, retain: Int, oldest: Revision) throws
        -> Revision
    {
        let kept = revision - oldest + 1
        guard kept > Revision(retain + retain / 32) else { return oldest }
        let oldest = revision - Revision(retain) + 1
        try connection.compactChangeLog(keepingFrom: oldest, newestRevision: revision)
        return oldest
    }
}
