/// How many requests a daemon's group commit carried per transaction over the loads measured
/// through it (`prefsd_commit_batch_requests`, before and after each), the size the storage
/// floor (``StorageFloor``) commits in.
final class CommittedBatches {
    private var requests = 0.0
    private var commits = 0.0

    /// The mean requests per commit over the loads measured; 1 before any.
    var meanSize: Double { commits > 0 ? requests / commits : 1 }

    /// Runs `load` on `daemon`, counting the batches it committed meanwhile; returns what `load`
    /// returns.
    func measuring(_ daemon: BenchDaemon, _ load: () throws -> Double) throws -> Double {
        let before = try Self.totals(daemon)
        let result = try load()
        let after = try Self.totals(daemon)
        requests += after.requests - before.requests
        commits += after.commits - before.commits
        return result
    }

    /// The requests and commits the daemon's histogram has counted so far.
    private static func totals(_ daemon: BenchDaemon) throws -> (requests: Double, commits: Double) {
        let totals = try daemon.metrics(["prefsd_commit_batch_requests_sum", "prefsd_commit_batch_requests_count"])
        return (totals[0], totals[1])
    }
}
