/// `prefsctl get`, the whole process, against `dconf read`.
enum CLISection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        try daemon.connection().request("PUT", "/v1/prefs/bench.cli", body: "\"value\"")
        let runs = bench.quick ? 20 : 200
        let median = try Load.processMilliseconds(
            bench.prefsctlURL, ["--socket", daemon.socketPath, "get", "bench.cli"], runs: runs)
        // dconf reads its database file directly (no session bus needed); the key is unset.
        let dconf = try executableOnPath("dconf").map { try Load.processMilliseconds($0, ["read", "/org/prefsbench/key"], runs: runs) }
        table.add(
            "prefsctl get, ms per process", median, baseline: dconf.map { ("dconf read, ms", $0) },
            target: dconf == nil ? "≤ dconf read (dconf not installed)" : "≤ 1.0×")
        daemon.stop()
    }
}
