import Foundation

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
        let metrics = try daemon.connection().requestBody("GET", "/v1/metrics")
        func value(_ name: String) -> Double {
            let prefix = name + " "
            guard let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
            return Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return (value("prefsd_commit_batch_requests_sum"), value("prefsd_commit_batch_requests_count"))
    }
}
