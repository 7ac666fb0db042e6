#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A running process's CPU time and memory, read from `/proc`.
struct ProcessMeter {
    let pid: Int32

    /// The CPU seconds this process spends running `body`.
    static func ownCPUSeconds(_ body: () throws -> Void) throws -> Double {
        let meter = ProcessMeter(pid: getpid())
        let before = meter.cpuSeconds
        try body()
        return meter.cpuSeconds - before
    }

    /// Resident memory, in MiB.
    var residentMiB: Double { statusMiB("VmRSS:") }

    /// Resident memory once it stops moving — the same, within 0.1 MiB, for 100 ms (at most 2 s
    /// of waiting) — in MiB: an idle process's. A daemon that has just answered its first request
    /// may still be finishing its start (prefsd gives back its start-up code pages once ready).
    var settledResidentMiB: Double {
        var samples = [residentMiB]
        let deadline = ContinuousClock.now + .seconds(2)
        while ContinuousClock.now < deadline {
            usleep(10_000)
            samples.append(residentMiB)
            let recent = samples.suffix(10)
            if recent.count == 10, let low = recent.min(), let high = recent.max(), high - low < 0.1 { break }
        }
        return samples.last!
    }

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
