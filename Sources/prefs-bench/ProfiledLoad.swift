import Foundation

/// `--only write-load`, `--only read-load` and `--only redis-load`: a steady load to profile, on
/// 16 connections — writes, each keyed and attributed as clients send them (`--plain`: neither),
/// GETs of one key, or the same GETs from redis (the baseline of the GET rows, to profile beside
/// the daemon's). The server's pid goes to standard error first, so a profiler can attach
/// (`perf record -g -p PID -- sleep 4`).
enum ProfiledLoad: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        if bench.only == .redisLoad { return try measureRedis(bench, into: &table) }
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        let reads = bench.only == .readLoad
        let keyed = !bench.plain
        FileHandle.standardError.write(Data("prefsd pid \(daemon.meter.pid); loading it for about 10 s\n".utf8))
        try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42")
        let (clients, perClient) = (16, reads ? (bench.quick ? 10_000 : 80_000) : (bench.quick ? 2000 : 16_000))
        let measured = try MeteredLoad(daemon.meter, requests: clients * perClient) {
            reads
                ? try Load.getsPerSecond(daemon, connections: clients, requestsPerConnection: perClient)
                : try Load.writesPerSecond(daemon, clients: clients, writesPerClient: perClient, idempotent: keyed, attributed: keyed)
        }.measure()
        let what = reads ? "GETs" : keyed ? "writes, keyed and attributed" : "writes"
        table.add("\(what)/s, 16 connections", measured.rate, baseline: nil, target: "-")
        table.add("daemon CPU µs per request", measured.cpu, baseline: nil, target: "-")
        daemon.stop()
    }

    /// redis-server answering the read load's GETs.
    private static func measureRedis(_ bench: PrefsBench, into table: inout ResultTable) throws {
        guard let redis = try BenchRedis.start() else { throw BenchError("redis-load needs redis-server on the PATH") }
        defer { redis.stop() }
        FileHandle.standardError.write(Data("redis-server pid \(redis.meter.pid); loading it for about 10 s\n".utf8))
        try RedisConnection(socketPath: redis.socketPath).command("SET", "bench.read", "42")
        let (clients, perClient) = (16, bench.quick ? 10_000 : 80_000)
        let measured = try MeteredLoad(redis.meter, requests: clients * perClient) {
            try Load.redisPerSecond(redis, connections: clients, requestsPerConnection: perClient, writing: false)
        }.measure()
        table.add("redis GETs/s, 16 connections", measured.rate, baseline: nil, target: "-")
        table.add("redis CPU µs per request", measured.cpu, baseline: nil, target: "-")
    }
}
