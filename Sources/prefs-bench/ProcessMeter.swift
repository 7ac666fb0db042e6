#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A running process's CPU time and memory, read from `/proc`.
struct ProcessMeter {
    let pid: Int32

    /// Resident memory, in MiB.
    var residentMiB: Double { statusMiB("VmRSS:") }

    /// The most resident memory the process has had, in MiB.
    var peakResidentMiB: Double { statusMiB("VmHWM:") }

    private func statusMiB(_ field: String) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field) } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }

    /// CPU seconds the process's threads have used, to the nanosecond: the sum of each thread's
    /// run time in `/proc/PID/task/*/schedstat` (`/proc/PID/stat` counts in 10 ms ticks, too
    /// coarse for a few thousand requests of a few µs).
    var cpuSeconds: Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let nanoseconds = tasks.reduce(0.0) { total, task in
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return total + (Double(stat.split(separator: " ").first ?? "0") ?? 0)
        }
        return nanoseconds / 1e9
    }
}

/// The first executable called `name` on `PATH`, if any: the peers the benchmark compares with
/// (redis-server, dconf) are measured only where they are installed.
func executableOnPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appending(path: name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}
