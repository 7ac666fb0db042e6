#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A prefsd the benchmark starts on a temp database, with its resident memory and CPU time.
final class BenchDaemon {
    private let server: BenchServer
    let socketPath: String

    /// Starts prefsd with `arguments`, on a SQLite file in `folder` (a new temp one by default),
    /// or on the PostgreSQL database at `postgresURL`.
    init(prefsd: URL, arguments: [String] = [], folder: URL? = nil, postgresURL: String? = nil) throws {
        let folder = folder ?? URL(fileURLWithPath: "/tmp/prefs-bench-\(UUID().uuidString.prefix(8))")
        let socketPath = folder.appending(path: "prefsd.sock").path
        self.socketPath = socketPath
        server = try BenchServer(
            prefsd, folder: folder,
            arguments: { folder in
                (postgresURL.map { ["--postgres", $0] } ?? ["--db", folder.appending(path: "prefs.sqlite").path])
                    + ["--socket", socketPath, "--log-level", "error"] + arguments
            },
            ready: {
                guard let connection = try? BenchConnection(socketPath: socketPath) else { return false }
                return (try? connection.request("GET", "/v1/prefs/bench.ready")) == 200
            })
    }

    /// Its database's folder.
    var folder: URL { server.folder }
    /// Seconds from start to the first answered read.
    var startupSeconds: Double { server.startupSeconds }
    /// The daemon's CPU time and memory.
    var meter: ProcessMeter { server.meter }

    func stop(removing: Bool = true) {
        server.stop(removing: removing)
    }

    /// Returns once a daemon's checkpoint of its last commit, a quarter second after it, is over,
    /// so that what is measured next has the CPU and the disk to itself. A pause, not a wait for
    /// an event — the checkpoint reports nothing — of twice the checkpoint's delay.
    static func pastCheckpoint() async throws {
        try await Task.sleep(for: .milliseconds(500))
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension BenchDaemon {
    /// The values of the samples `names` (each a metric's name with its labels, as
    /// `GET /v1/metrics` writes it) in one scrape; 0 for one not there.
    func metrics(_ names: [String]) throws -> [Double] {
        let lines = try connection().requestBody("GET", "/v1/metrics").split(separator: "\n")
        return names.map { name in
            let prefix = name + " "
            guard let line = lines.first(where: { $0.hasPrefix(prefix) }) else { return 0 }
            return Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
    }
}
