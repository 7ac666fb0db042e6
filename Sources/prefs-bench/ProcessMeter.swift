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

    /// CPU seconds the process has used (user + system).
    var cpuSeconds: Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        // After the command name: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 13 else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks
    }
}

/// The first executable called `name` on `PATH`, if any: the peers the benchmark compares with
/// (redis-server, dconf) are measured only where they are installed.
func executableOnPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appending(path: name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}
