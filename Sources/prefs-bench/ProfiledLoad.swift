import Foundation

/// `--only write-load` and `--only read-load`: a steady load to profile, on 16 connections —
/// writes, each keyed and attributed as clients send them (`--plain`: neither), or GETs of one
/// key. The daemon's pid goes to standard error first, so a profiler can attach
/// (`perf record -g -p PID -- sleep 4`).
enum ProfiledLoad: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        let reads = bench.only == .readLoad
        let keyed = !bench.plain
        FileHandle.standardError.write(Data("prefsd pid \(daemon.meter.pid); loading it for about 10 s\n".utf8))
        try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42")
        let (clients, perClient) = (16, reads ? (bench.quick ? 10_000 : 80_000) : (bench.quick ? 2000 : 16_000))
        let before = daemon.meter.cpuSeconds
        let rate =
            reads
            ? try Load.getsPerSecond(daemon, connections: clients, requestsPerConnection: perClient)
            : try Load.writesPerSecond(daemon, clients: clients, writesPerClient: perClient, idempotent: keyed, attributed: keyed)
        let cpu = (daemon.meter.cpuSeconds - before) / Double(clients * perClient) * 1e6
        let what = reads ? "GETs" : keyed ? "writes, keyed and attributed" : "writes"
        table.add("\(what)/s, 16 connections", rate, baseline: nil, target: "-")
        table.add("daemon CPU µs per request", cpu, baseline: nil, target: "-")
        daemon.stop()
    }
}
