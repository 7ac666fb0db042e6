#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A server process the benchmark starts in a temp folder of its own and waits for (prefsd,
/// redis-server); stopped with the benchmark if a section fails.
final class BenchServer {
    let folder: URL
    let process = Process()
    /// Seconds from start to the first answer `ready` saw.
    private(set) var startupSeconds = 0.0

    /// Starts `executable` with the arguments `arguments` gives for the folder, and waits (10 s
    /// at most) until `ready` answers true.
    init(_ executable: URL, folder: URL, arguments: (URL) -> [String], ready: () -> Bool) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        process.executableURL = executable
        process.arguments = arguments(folder)
        process.standardOutput = FileHandle.nullDevice
        try process.runWithSignalsUnblocked()
        let start = ContinuousClock.now
        for _ in 0..<20_000 {
            if ready() {
                startupSeconds = (ContinuousClock.now - start).seconds
                return
            }
            guard process.isRunning else { throw BenchError("\(executable.lastPathComponent) exited with \(process.terminationStatus)") }
            usleep(500)
        }
        throw BenchError("\(executable.lastPathComponent) did not answer")
    }

    /// Its CPU time and memory.
    var meter: ProcessMeter { ProcessMeter(pid: process.processIdentifier) }

    /// A server still running when the benchmark lets go of it (a section failed) is stopped.
    deinit {
        if process.isRunning { stop() }
    }

    /// Stops it (SIGTERM) and, with `removing`, deletes its folder.
    func stop(removing: Bool = true) {
        process.terminate()
        process.waitUntilExit()
        if removing { try? FileManager.default.removeItem(at: folder) }
    }
}
