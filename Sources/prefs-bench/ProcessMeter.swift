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

    /// CPU seconds the process has used, to the nanosecond, threads that have ended included: its
    /// CPU-time clock (`clock_getcpuclockid`). `/proc/PID/stat` counts in 10 ms ticks, too coarse
    /// for a few thousand requests of a few µs, and summing the live threads' run times loses the
    /// time of any thread that ends during a measurement.
    var cpuSeconds: Double {
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else { return 0 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The first executable called `name` on `PATH`, if any: the peers the benchmark compares with
/// (redis-server, dconf) are measured only where they are installed.
func executableOnPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appending(path: name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}
