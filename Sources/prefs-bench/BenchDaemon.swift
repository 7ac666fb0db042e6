#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A prefsd the benchmark starts on a temp database, with its resident memory and CPU time.
final class BenchDaemon {
    let folder: URL
    let socketPath: String
    let process: Process

    init(prefsd: URL, arguments: [String] = [], folder: URL? = nil) throws {
        let folder = folder ?? URL(fileURLWithPath: "/tmp/prefs-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        socketPath = folder.appending(path: "prefsd.sock").path
        process = Process()
        process.executableURL = prefsd
        process.arguments = ["--db", folder.appending(path: "prefs.sqlite").path, "--socket", socketPath, "--log-level", "error"] + arguments
        try process.run()
        try waitUntilReady()
    }

    /// Seconds from start to the first answered read.
    private(set) var startupSeconds = 0.0

    private func waitUntilReady() throws {
        let start = ContinuousClock.now
        for _ in 0..<20_000 {
            if let connection = try? BenchConnection(socketPath: socketPath), (try? connection.request("GET", "/v1/prefs/bench.ready")) == 200 {
                startupSeconds = (ContinuousClock.now - start).seconds
                return
            }
            guard process.isRunning else { throw BenchError("prefsd exited with \(process.terminationStatus)") }
            usleep(500)
        }
        throw BenchError("prefsd did not answer")
    }

    /// The daemon's CPU time and memory.
    var meter: ProcessMeter { ProcessMeter(pid: process.processIdentifier) }

    /// A daemon still running when the benchmark lets go of it (a section failed) is stopped.
    deinit {
        if process.isRunning { stop() }
    }

    func stop(removing: Bool = true) {
        process.terminate()
        process.waitUntilExit()
        if removing { try? FileManager.default.removeItem(at: folder) }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
