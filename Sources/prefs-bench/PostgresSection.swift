/// PostgreSQL: several hosts on one database, against pgbench and a SQLite daemon; skipped
/// without `--postgres`.
enum PostgresSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        guard let server = bench.postgres else {
            table.skip("PostgreSQL rows", because: "not measured: PostgreSQL is not installed (apt-get install postgresql)")
            return
        }
        let quick = bench.quick
        let postgres = BenchPostgres(serverURL: server)
        let url = try postgres.createDatabase()
        let hosts = try (0..<3).map { _ in try BenchDaemon(prefsd: bench.prefsdURL, postgresURL: url) }
        let sqlite = try BenchDaemon(prefsd: bench.prefsdURL)
        let pgbench = try postgres.pgbenchSimpleUpdates(clients: 16, seconds: quick ? 2 : 5)
        let rates = try Load.interleavedMedians(rounds: bench.rounds, [
            { try Load.writesPerSecond(hosts[0], clients: 1, writesPerClient: quick ? 200 : 1000) },
            { try Load.writesPerSecond(hosts[0], clients: 64, writesPerClient: quick ? 20 : 200) },
            { try Load.writesPerSecond(hosts, clients: 64, writesPerClient: quick ? 20 : 200) },
        ])
        let (single, oneHost, threeHosts) = (rates[0], rates[1], rates[2])
        table.add("PostgreSQL: writes/s, 1 client, one host", single, baseline: ("pgbench simple-update tps, 16 conn.", pgbench), target: "-")
        table.add("PostgreSQL: writes/s, 64 clients, one host", oneHost, baseline: ("1 client", single), target: "≥ 10× 1 client")
        table.add("PostgreSQL: writes/s, 64 clients over 3 hosts", threeHosts, baseline: ("64 clients, one host", oneHost), target: "≥ 1×")
        let latency = try Load.watchLatency(hosts[0], watching: hosts[1], samples: quick ? 200 : 1000)
        table.add("PostgreSQL: write on host A → event on host B, p50 ms", latency.p50 * 1000, baseline: nil, target: "≤ 2 ms")
        table.add("PostgreSQL: write on host A → event on host B, p99 ms", latency.p99 * 1000, baseline: nil, target: "≤ 10 ms")
        for daemon in [hosts[0], sqlite] { try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42") }
        try await BenchDaemon.pastCheckpoint()
        let requests = quick ? 200 : 1000
        let gets = try Load.interleavedMedians(rounds: bench.rounds, [
            { try Load.getsPerSecond(hosts[0], connections: 16, requestsPerConnection: requests) },
            { try Load.getsPerSecond(sqlite, connections: 16, requestsPerConnection: requests) },
        ])
        table.add("PostgreSQL: GET/s on a host, 16 connections", gets[0], baseline: ("SQLite daemon GET/s", gets[1]), target: "≥ 0.8× (within 20%)")
        for daemon in hosts + [sqlite] { daemon.stop() }
    }
}
