#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The PostgreSQL server the benchmark's PostgreSQL section runs on (started by
/// `Scripts/bench.sh` with `Scripts/postgres-for-tests.sh`, and given as `--postgres URL`):
/// databases of the benchmark's own, and pgbench's simple-update rate on the same server as the
/// baseline.
struct BenchPostgres {
    /// The server's own database, `postgresql://USER@HOST:PORT/postgres`.
    let serverURL: String

    /// A new, empty database's URL.
    func createDatabase() throws -> String {
        let name = "prefs_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try run("psql", [serverURL, "-q", "-c", "CREATE DATABASE \(name)"])
        var components = URLComponents(string: serverURL)!
        components.path = "/" + name
        return components.string!
    }

    /// pgbench's built-in simple-update transactions per second, `clients` connections, for
    /// `seconds`, on a database of its own.
    func pgbenchSimpleUpdates(clients: Int, seconds: Int) throws -> Double {
        let database = try createDatabase()
        try run("pgbench", ["-i", "-s", "1", "-q", database])
        let output = try run("pgbench", ["-n", "-b", "simple-update", "-c", "\(clients)", "-j", "2", "-T", "\(seconds)", database])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(line.dropFirst("tps = ".count).prefix { $0 != " " })
        else { throw BenchError("pgbench printed no rate: \(output)") }
        return tps
    }

    /// Runs a PostgreSQL tool to its end and returns what it printed.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        guard let executable = executableOnPath(tool) else { throw BenchError("\(tool) is not installed") }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = FileManager.default.temporaryDirectory.appending(path: "prefs-bench-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.runWithSignalsUnblocked()
        process.waitUntilExit()
        let text = try String(contentsOf: output, encoding: .utf8)
        guard process.terminationStatus == 0 else { throw BenchError("\(tool) failed: \(text)") }
        return text
    }
}
