/// The cost of a write with 0 against N idle watchers of other keys, measured 0, N, 0 watchers
/// on the same daemon: the baseline is the mean of the two runs without, so that drift over time
/// (WAL growth, checkpoints) does not pass for watcher cost.
enum WatchersSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL, arguments: ["--durability", "normal"])
        let idleRSS = daemon.meter.settledResidentMiB
        // A fresh daemon's first thousands of writes cost less than those after them (on this
        // 2-core VM, about a quarter less): without writes first, the measures with and after
        // the watchers were dearer than the one before them with no watcher at all
        // (`--watchers 0` read 1.12–1.31×).
        _ = try Load.microsecondsPerWrite(daemon, count: bench.writes)
        let before = try Load.microsecondsPerWrite(daemon, count: bench.writes)
        var watchers = try Load.openIdleWatchers(daemon, count: bench.watchers)
        let with = try Load.microsecondsPerWrite(daemon, count: bench.writes)
        let watchedRSS = daemon.meter.residentMiB
        watchers.removeAll()
        try Load.waitForWatchers(daemon, count: 0)
        let after = try Load.microsecondsPerWrite(daemon, count: bench.writes)
        table.add(
            "daemon CPU µs per write, \(bench.watchers) watchers of other keys", with.cpu,
            baseline: ("0 watchers", (before.cpu + after.cpu) / 2), target: "≤ 1.1×")
        table.add(
            "wall µs per write, \(bench.watchers) watchers of other keys", with.wall,
            baseline: ("0 watchers", (before.wall + after.wall) / 2), target: "≤ 1.1×")
        table.add("prefsd RSS idle, MiB", idleRSS, baseline: nil, target: "≤ 25 MiB")
        table.add("prefsd RSS, \(bench.watchers) watchers, MiB", watchedRSS, baseline: nil, target: "≤ 96 MiB")
        daemon.stop()
    }
}
