// prefs-bench: measures prefsd against its targets (docs/benchmarks.md), each with a baseline measured
// in the same run, and prints one table. Run through Scripts/bench.sh (release build).
//
//     prefs-bench [--prefsd PATH] [--prefsctl PATH] [--watchers N] [--quick] [--postgres SERVER-URL]
#if canImport(Glibc)
import PrefsEngine
import Glibc
#endif
import Foundation
import GRDB
import PrefsStore
import PrefsSocket

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}
let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let prefsd = URL(fileURLWithPath: option("--prefsd") ?? binaries.appending(path: "prefsd").path)
let prefsctl = URL(fileURLWithPath: option("--prefsctl") ?? binaries.appending(path: "prefsctl").path)
let quick = arguments.contains("--quick")
let watcherCount = Int(option("--watchers") ?? "") ?? 10_000
let writes = quick ? 500 : 2000
/// `--postgres postgresql://USER@HOST:PORT/postgres`: the server the PostgreSQL section uses.
let postgresServer = option("--postgres")
/// `--only writes|tokens|ofrep|history|watchers|cli|coldstart|attachments|postgres|reads`: run one section.
/// `--only write-load` and `--only read-load` (never part of a full run) hold a daemon under a
/// steady load for a profiler (see docs/benchmarks.md).
let only = option("--only")
func section(_ name: String) -> Bool { only == nil || only == name }

// A section that fails ends the run with its error; leaving the `do` releases its daemons,
// which stop them (BenchDaemon, BenchRedis).
do {
    var table = ResultTable()

    // MARK: A steady load to profile, on 16 connections: writes, each keyed and attributed as
    // clients send them (`--plain`: neither), or GETs of one key. The daemon's pid goes to
    // standard error first, so a profiler can attach (`perf record -g -p PID -- sleep 4`).

    if only == "write-load" || only == "read-load" {
        let daemon = try BenchDaemon(prefsd: prefsd)
        let reads = only == "read-load"
        let keyed = !arguments.contains("--plain")
        FileHandle.standardError.write(Data("prefsd pid \(daemon.meter.pid); loading it for about 10 s\n".utf8))
        try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42")
        let (clients, perClient) = (16, reads ? (quick ? 10_000 : 80_000) : (quick ? 2000 : 16_000))
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

    // MARK: Writes: raw SQLite vs the daemon, 1 and 64 clients, durability full

    if section("writes") {
        let daemon = try BenchDaemon(prefsd: prefsd)
        // Rates that are compared are measured in turns, three times each (medians): one run of
        // each, seconds apart, compared this VM's drift as much as the code.
        let rates = try Load.interleavedMedians(rounds: quick ? 1 : 3, [
            { try RawSQLite.upsertsPerSecond(count: writes, durability: .full) },
            { try Load.writesPerSecond(daemon, clients: 1, writesPerClient: writes) },
            { try Load.writesPerSecond(daemon, clients: 64, writesPerClient: quick ? 20 : 500) },
        ])
        let (rawFull, single, concurrent) = (rates[0], rates[1], rates[2])
        table.add("writes/s, 1 client, full", single, baseline: ("raw SQLite FULL txn/s", rawFull), target: "≥ 3000/s (3× etcd ~1000/s), ≥ dconf ~630/s")
        table.add("writes/s, 64 clients, full", concurrent, baseline: ("1 client", single), target: "≥ 10× 1 client")
        table.add("writes/s, 64 clients, full", concurrent, baseline: ("raw SQLite FULL txn/s", rawFull), target: "≥ 5× raw (group commit)")

        // MARK: GET and SET against redis on a Unix socket, with CPU per request
        let redis = try BenchRedis.start()
        let perConnection = quick ? 500 : 3000
        try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42")
        if let redis { try RedisConnection(socketPath: redis.socketPath).command("SET", "bench.read", "42") }
        /// `load`'s rate and the CPU µs it cost `meter`'s process per request.
        func metered(_ meter: ProcessMeter, requests: Int, _ load: () throws -> Double) rethrows -> (rate: Double, cpu: Double) {
            let before = meter.cpuSeconds
            let rate = try load()
            return (rate, (meter.cpuSeconds - before) / Double(requests) * 1e6)
        }
        let unmeasured = "redis-server not installed"
        // The writer checkpoints 250 ms after its last commit: let that pass, so that the reads'
        // CPU is the reads' own.
        usleep(500_000)
        /// `load` on the daemon and `redisLoad` on redis, in turns, three times each (medians):
        /// each one's rate and CPU µs per request (redis's nil without redis).
        func againstRedis(
            requests: Int, _ load: @escaping () throws -> Double, redisRequests: Int,
            _ redisLoad: @escaping (BenchRedis) throws -> Double
        ) throws -> (daemon: (rate: Double, cpu: Double), redis: (rate: Double, cpu: Double)?) {
            var measurements: [() throws -> [Double]] = [
                {
                    let measured = try metered(daemon.meter, requests: requests, load)
                    return [measured.rate, measured.cpu]
                }
            ]
            if let redis {
                measurements.append {
                    let measured = try metered(redis.meter, requests: redisRequests) { try redisLoad(redis) }
                    return [measured.rate, measured.cpu]
                }
            }
            let medians = try Load.interleavedMedians(rounds: quick ? 1 : 3, measurements)
            return ((medians[0][0], medians[0][1]), medians.count > 1 ? (medians[1][0], medians[1][1]) : nil)
        }
        for connections in [1, 16] {
            // At least 10 000 reads per run, so that one run lasts long enough to measure.
            let requests = max(perConnection, (quick ? 2000 : 10_000) / connections)
            let (gets, redisGets) = try againstRedis(
                requests: connections * requests,
                { try Load.getsPerSecond(daemon, connections: connections, requestsPerConnection: requests) },
                redisRequests: connections * requests,
                { redis in try Load.redisPerSecond(redis, connections: connections, requestsPerConnection: requests, writing: false) })
            let plural = connections == 1 ? "connection" : "connections"
            table.add(
                "GET/s, \(connections) \(plural)", gets.rate, baseline: redisGets.map { ("redis GET/s", $0.rate) },
                target: redis == nil ? unmeasured : connections == 16 ? "≥ 0.9×" : "-")
            table.add(
                "daemon CPU µs per GET, \(connections) \(plural)", gets.cpu, baseline: redisGets.map { ("redis µs per GET", $0.cpu) },
                target: redis == nil ? unmeasured : connections == 16 ? "≤ 1.4×" : "-")
        }
        // Writes as clients send them — each with an Idempotency-Key, a User-Agent and a
        // Prefs-Reason, its author recorded — against redis's SETs.
        let writers = 16
        let writesPerWriter = quick ? 200 : 1000
        let (sets, redisSets) = try againstRedis(
            requests: writers * writesPerWriter,
            {
                try Load.writesPerSecond(
                    daemon, clients: writers, writesPerClient: writesPerWriter, idempotent: true, attributed: true)
            },
            redisRequests: writers * perConnection,
            { redis in try Load.redisPerSecond(redis, connections: writers, requestsPerConnection: perConnection, writing: true) })
        table.add(
            "writes/s, 16 connections, full, keyed and attributed", sets.rate,
            baseline: redisSets.map { ("redis SET/s, no persistence", $0.rate) }, target: "-")
        table.add(
            "daemon CPU µs per write, 16 connections, keyed and attributed", sets.cpu,
            baseline: redisSets.map { ("redis µs per SET", $0.cpu) }, target: redis == nil ? "≤ 25 µs" : "≤ 25 µs, ≤ 5×")
        redis?.stop()

        // MARK: A write with an Idempotency-Key against one without, in turns (medians)
        let keyedWrites = quick ? 50 : 300
        let keyed = try Load.interleavedMedians(
            rounds: quick ? 1 : 3,
            [false, true].map { idempotent in
                {
                    try metered(daemon.meter, requests: writers * keyedWrites) {
                        try Load.writesPerSecond(daemon, clients: writers, writesPerClient: keyedWrites, idempotent: idempotent)
                    }.cpu
                }
            })
        table.add(
            "daemon CPU µs per write with Idempotency-Key, 16 connections", keyed[1], baseline: ("without", keyed[0]),
            target: "≤ 1.05×")
        // What the key's stored outcome costs the storage alone: the least a key can add to a write.
        table.add(
            "CPU µs per stored outcome, the storage alone, batches of 16", try OutcomeRowCost.microsecondsPerRow(batches: quick ? 100 : 500),
            baseline: ("daemon µs per write without a key", keyed[0]), target: "- (≤ 0.05× for the key's ≤ 1.05×)")

        // MARK: A write whose author and reason are recorded against the same write to a daemon
        // that records none (prefsd --no-authors), in turns (medians): both with an
        // Idempotency-Key, a User-Agent and a Prefs-Reason, as clients send them.
        let anonymous = try BenchDaemon(prefsd: prefsd, arguments: ["--no-authors"])
        let authored = try Load.interleavedMedians(
            rounds: quick ? 1 : 3,
            [anonymous, daemon].map { target in
                {
                    try metered(target.meter, requests: writers * keyedWrites) {
                        try Load.writesPerSecond(
                            target, clients: writers, writesPerClient: keyedWrites, idempotent: true, attributed: true)
                    }.cpu
                }
            })
        anonymous.stop()
        table.add(
            "daemon CPU µs per write, author and reason recorded, 16 connections", authored[1],
            baseline: ("--no-authors", authored[0]), target: "≤ 1.05×")

        // MARK: Write → watcher event latency
        let latency = try Load.watchLatency(daemon, samples: quick ? 200 : 1000)
        table.add("write→event p50, ms", latency.p50 * 1000, baseline: nil, target: "≤ 0.5 ms")
        table.add("write→event p99, ms", latency.p99 * 1000, baseline: nil, target: "≤ 0.5 ms")
        daemon.stop()
    }

    // MARK: History and the audit log over a long change log, and what a change costs on disk

    if section("history") {
        let daemon = try BenchDaemon(prefsd: prefsd, arguments: ["--durability", "normal", "--retain-changes", "2000000"])
        let figures = try HistoryLoad.measure(daemon, changes: quick ? 100_000 : 1_000_000, historyAt: quick ? 20_000 : 100_000)
        table.add("a key's history, \(figures.historyLogSize) changes in the log, ms", figures.historyMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 5 ms")
        table.add("history of a key changed once, before them all, ms", figures.rareHistoryMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 5 ms")
        table.add("audit log's first page (100), \(figures.logSize) changes, ms", figures.firstPageMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 20 ms")
        table.add("audit log's first page by prefix, \(figures.logSize) changes, ms", figures.prefixPageMilliseconds,
            baseline: ("GET of the key, ms", figures.readMilliseconds), target: "≤ 20 ms")
        table.add("bytes on disk per logged change", figures.bytesPerChange,
            baseline: ("bytes per stored value", figures.bytesPerValue), target: "-")
    }

    // MARK: Cost of a write with 0 vs N idle watchers of other keys
    // Measured 0, N, 0 watchers on the same daemon: the baseline is the mean of the two runs
    // without, so drift over time (WAL growth, checkpoints) does not pass for watcher cost.

    if section("watchers") {
        let daemon = try BenchDaemon(prefsd: prefsd, arguments: ["--durability", "normal"])
        let idleRSS = daemon.meter.settledResidentMiB
        // A fresh daemon's first thousands of writes cost less than those after them (on this
        // 2-core VM, about a quarter less): without writes first, the measures with and after
        // the watchers were dearer than the one before them with no watcher at all
        // (`--watchers 0` read 1.12–1.31×).
        _ = try Load.microsecondsPerWrite(daemon, count: writes)
        let before = try Load.microsecondsPerWrite(daemon, count: writes)
        var watchers = try Load.openIdleWatchers(daemon, count: watcherCount)
        let with = try Load.microsecondsPerWrite(daemon, count: writes)
        let watchedRSS = daemon.meter.residentMiB
        watchers.removeAll()
        try Load.waitForWatchers(daemon, count: 0)
        let after = try Load.microsecondsPerWrite(daemon, count: writes)
        table.add(
            "daemon CPU µs per write, \(watcherCount) watchers of other keys", with.cpu,
            baseline: ("0 watchers", (before.cpu + after.cpu) / 2), target: "≤ 1.1×")
        table.add(
            "wall µs per write, \(watcherCount) watchers of other keys", with.wall,
            baseline: ("0 watchers", (before.wall + after.wall) / 2), target: "≤ 1.1×")
        table.add("prefsd RSS idle, MiB", idleRSS, baseline: nil, target: "≤ 25 MiB")
        table.add("prefsd RSS, \(watcherCount) watchers, MiB", watchedRSS, baseline: nil, target: "≤ 96 MiB")
        daemon.stop()
    }

    // MARK: prefsctl get, whole process

    if section("cli") {
        let daemon = try BenchDaemon(prefsd: prefsd)
        try daemon.connection().request("PUT", "/v1/prefs/bench.cli", body: "\"value\"")
        let runs = quick ? 20 : 200
        let median = try Load.processMilliseconds(prefsctl, ["--socket", daemon.socketPath, "get", "bench.cli"], runs: runs)
        // dconf reads its database file directly (no session bus needed); the key is unset.
        let dconf = try executableOnPath("dconf").map { try Load.processMilliseconds($0, ["read", "/org/prefsbench/key"], runs: runs) }
        table.add(
            "prefsctl get, ms per process", median, baseline: dconf.map { ("dconf read, ms", $0) },
            target: dconf == nil ? "≤ dconf read (dconf not installed)" : "≤ 1.0×")
        daemon.stop()
    }

    // MARK: Cold start with 100 000 stored preferences

    if section("coldstart") {
        let count = quick ? 20_000 : 100_000
        let first = try BenchDaemon(prefsd: prefsd, arguments: ["--durability", "normal"])
        let connection = try first.connection()
        for batch in 0..<(count / 1000) {
            let operations = (0..<1000).map { #"{"op":"set","key":"cold.k\#(batch).\#($0)","value":\#($0)}"# }
            try connection.request("POST", "/v1/prefs:batch", body: #"{"operations":[\#(operations.joined(separator: ","))]}"#)
        }
        first.stop(removing: false)
        let second = try BenchDaemon(prefsd: prefsd, folder: first.folder)
        table.add("cold start to ready, \(count) prefs, ms", second.startupSeconds * 1000, baseline: nil, target: "≤ 200 ms")
        second.stop()
    }

    // MARK: 50 MiB attachment upload and download, with the daemon's peak memory

    if section("attachments") {
        let daemon = try BenchDaemon(prefsd: prefsd)
        let connection = try daemon.connection()
        let created = try connection.requestBody("POST", "/v1/drafts", body: #"{"account": "bench"}"#)
        guard let id = created.split(separator: "\"").drop(while: { $0 != "id" }).dropFirst(2).first else {
            throw BenchError("cannot create a draft: \(created)")
        }
        let size = 50 * 1024 * 1024
        let megabytes = Double(size) / 1_000_000
        let rssBefore = daemon.meter.residentMiB
        // Three uploads (medians), each of other bytes: the store keeps equal bytes once. Each
        // starts on a quiet disk: past the daemon's checkpoint of the one before (250 ms after
        // its commit), and with what earlier sections and that checkpoint wrote synced, which an
        // upload's own sync would otherwise wait for.
        let rates = try (0..<(quick ? 1 : 3)).map { round -> [Double] in
            usleep(500_000)
            sync()
            let chunk = Data((0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) })
            let uploadStart = ContinuousClock.now
            connection.write(Data("POST /v1/drafts/\(id)/attachments?filename=bench\(round).bin HTTP/1.1\r\nHost: prefsd\r\nContent-Length: \(size)\r\n\r\n".utf8))
            for _ in 0..<(size / chunk.count) { connection.write(chunk) }
            let answer = try connection.requestBodyOfPending()
            let uploadSeconds = (ContinuousClock.now - uploadStart).seconds
            guard let attachment = answer.components(separatedBy: "\"id\":\"").dropFirst().first?.prefix(36) else {
                throw BenchError("the upload failed: \(answer.prefix(300))")
            }
            let downloadStart = ContinuousClock.now
            connection.send("GET", "/v1/drafts/\(id)/attachments/\(attachment)/data")
            let downloaded = try connection.readAndDiscardBody()
            let downloadSeconds = (ContinuousClock.now - downloadStart).seconds
            guard downloaded == size else { throw BenchError("downloaded \(downloaded) of \(size) bytes") }
            return [megabytes / uploadSeconds, megabytes / downloadSeconds]
        }
        let median = { (index: Int) in rates.map { $0[index] }.sorted()[rates.count / 2] }
        table.add("upload 50 MiB, MB/s (median of \(rates.count))", median(0), baseline: nil, target: "≥ 200 MB/s")
        table.add("download 50 MiB, MB/s (median of \(rates.count))", median(1), baseline: nil, target: "≥ 200 MB/s")
        table.add("prefsd peak RSS during them, MiB", daemon.meter.peakResidentMiB, baseline: ("RSS before", rssBefore), target: "flat (no 50 MiB rise)")
        daemon.stop()
    }

    // MARK: PostgreSQL: several hosts on one database

    if section("postgres") {
        if let postgresServer {
            let postgres = BenchPostgres(serverURL: postgresServer)
            let url = try postgres.createDatabase()
            let hosts = try (0..<3).map { _ in try BenchDaemon(prefsd: prefsd, postgresURL: url) }
            let sqlite = try BenchDaemon(prefsd: prefsd)
            let pgbench = try postgres.pgbenchSimpleUpdates(clients: 16, seconds: quick ? 2 : 5)
            let rates = try Load.interleavedMedians(rounds: quick ? 1 : 3, [
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
            usleep(500_000)
            let requests = quick ? 200 : 1000
            let gets = try Load.interleavedMedians(rounds: quick ? 1 : 3, [
                { try Load.getsPerSecond(hosts[0], connections: 16, requestsPerConnection: requests) },
                { try Load.getsPerSecond(sqlite, connections: 16, requestsPerConnection: requests) },
            ])
            table.add("PostgreSQL: GET/s on a host, 16 connections", gets[0], baseline: ("SQLite daemon GET/s", gets[1]), target: "≥ 0.8× (within 20%)")
            for daemon in hosts + [sqlite] { daemon.stop() }
        } else {
            table.skip("PostgreSQL rows", because: "not measured: PostgreSQL is not installed (apt-get install postgresql)")
        }
    }

    // MARK: Named tokens: GET/s over TCP with a named token against the file token, in turns
    // (medians): a named token is found in memory, never by a database round trip.

    if section("tokens") {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tokenFile = folder.appending(path: "token").path
        try "bench-file-token".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let port = LoopbackTCP.freePort()
        let daemon = try BenchDaemon(prefsd: prefsd, arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile], folder: folder)
        let connection = try daemon.connection()
        try connection.request("PUT", "/v1/prefs/bench.read", body: "42")
        let created = try connection.requestBody("POST", "/v1/tokens", body: #"{"name":"bench","role":"reader"}"#)
        guard let start = created.range(of: #""secret":""#), let end = created[start.upperBound...].firstIndex(of: "\"") else {
            throw BenchError("no token was created: \(created)")
        }
        let secret = String(created[start.upperBound..<end])
        usleep(500_000)
        let requests = quick ? 500 : 3000
        let gets = try Load.interleavedMedians(
            rounds: quick ? 1 : 3,
            ["bench-file-token", secret].map { token in
                {
                    try Load.getsPerSecond(connections: 16, requestsPerConnection: requests, headers: ["Authorization: Bearer \(token)"]) {
                        try BenchConnection(tcpPort: port)
                    }
                }
            })
        table.add("TCP GET/s with a named token, 16 connections", gets[1], baseline: ("file token GET/s", gets[0]), target: "≥ 0.95×")
        daemon.stop()
    }

    // MARK: OFREP: one flag's evaluation against a GET of the same key at the same scope, on
    // the socket, 16 connections, in turns (medians).

    if section("ofrep") {
        let daemon = try BenchDaemon(prefsd: prefsd)
        try daemon.connection().request("PUT", "/v1/prefs/bench.read?scope=/accounts", body: "42")
        usleep(500_000)
        let socket = daemon.socketPath
        let requests = quick ? 500 : 3000
        let rates = try Load.interleavedMedians(rounds: quick ? 1 : 3, [
            { try Load.getsPerSecond(daemon, connections: 16, requestsPerConnection: requests) },
            {
                try Load.requestsPerSecond(
                    "POST", "/ofrep/v1/evaluate/flags/bench.read", body: #"{"context":{"scope":"/accounts/alice"}}"#, connections: 16,
                    requestsPerConnection: requests
                ) { try BenchConnection(socketPath: socket) }
            },
        ])
        table.add("OFREP evaluations/s, 16 connections", rates[1], baseline: ("GET /v1/prefs/{key}/s", rates[0]), target: "≥ 0.8×")
        daemon.stop()
    }

    // MARK: In-process reads: embedded store, wrapper, context

    if section("reads") {
        let reads = try await ReadCost.medians()
        table.add("embedded resolve, ns per read (median)", reads.resolve, baseline: nil, target: "≤ 1 µs")
        table.add("@PreferenceObserving read, ns (median)", reads.wrapper, baseline: nil, target: "≤ 1 µs")
        table.add("withPrefs context read, ns (median)", reads.context, baseline: nil, target: "≤ 1 µs")
    }

    table.print()
} catch {
    FileHandle.standardError.write(Data("prefs-bench: \(error)\n".utf8))
    exit(1)
}
