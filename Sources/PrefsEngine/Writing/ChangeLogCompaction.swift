import PrefsKit
import Synchronization

/// When the change log drops its oldest rows: it keeps at least `--retain-changes` of them, and
/// every change younger than `--retain-for`, and drops the older ones in steps of `retain / 32`
/// rather than at every commit — that would cost each commit the two extra pages a compaction
/// writes (the state row and the log's first leaf), and with `--durability full` every page is
/// part of the sync a client's acknowledgement waits for. The storage keeps, below the oldest
/// revision, the changes that set what is stored now (``WriteConnection/compactChangeLog(keepingFrom:newestRevision:)``).
final class ChangeLogCompaction: Sendable {
    private let retain: Int
    private let retainFor: Double?
    /// Until when no compaction is tried, in seconds since 1970, after one that the age floor
    /// held back: the log's first young change was looked up then, and is not again at every commit.
    private let heldBackUntil = Mutex<Double>(0)

    /// Compacts to keep `retain` changes and those of the last `retainFor`.
    init(retain: Int, retainFor: Duration?) {
        self.retain = retain
        self.retainFor = retainFor.map { Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18 }
    }

    /// Compacts the log once it holds more than `retain + retain / 32` changes up to `revision`,
    /// none of them younger than `retainFor` at `time`, and returns the oldest revision it then
    /// holds (`oldest`, the one it held before, if it did not compact).
    func compact(_ connection: any WriteConnection, revision: Revision, oldest: Revision, time: Double) throws -> Revision {
        let step = Revision(retain / 32)
        guard revision - oldest + 1 > Revision(retain) + step else { return oldest }
        var keepFrom = revision - Revision(retain) + 1
        if let retainFor {
            guard heldBackUntil.withLock({ $0 <= time }) else { return oldest }
            let young = try connection.firstRevision(committedSince: time - retainFor) ?? revision + 1
            if young < keepFrom {
                // The age floor holds more back: look again once a 32nd of it has passed, not at
                // every commit.
                heldBackUntil.withLock { $0 = time + retainFor / 32 }
                keepFrom = young
                guard keepFrom >= oldest + max(step, 1) else { return oldest }
            }
        }
        try connection.compactChangeLog(keepingFrom: keepFrom, newestRevision: revision)
        return keepFrom
    }
}
