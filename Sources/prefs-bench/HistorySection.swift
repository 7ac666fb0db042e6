/// History and the audit log over a long change log, and what a change costs on disk.
enum HistorySection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let arguments = ["--durability", "normal", "--retain-changes", "2000000"]
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL, arguments: arguments)
        let figures = try HistoryLoad.measure(
            daemon, restartedBy: { try BenchDaemon(prefsd: bench.prefsdURL, arguments: arguments, folder: $0) },
            changes: bench.quick ? 100_000 : 1_000_000)
        table.add("a key's history, \(figures.logSize) changes in the log, ms", figures.historyMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 5 ms")
        table.add("history of a key changed once, before \(figures.logSize) others, ms", figures.rareHistoryMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 5 ms")
        table.add("audit log's first page (100), \(figures.logSize) changes, ms", figures.firstPageMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 20 ms")
        table.add("audit log's first page by prefix, \(figures.logSize) changes, ms", figures.prefixPageMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 20 ms")
        table.add("bytes on disk per logged change", figures.bytesPerChange,
            baseline: ("bytes per stored value", figures.bytesPerValue), target: "-")
        table.add("cold start to ready, \(figures.logSize) changes in the log, ms", figures.coldStartMilliseconds,
            baseline: nil, target: "≤ 1.1× before the key index")
    }
}
