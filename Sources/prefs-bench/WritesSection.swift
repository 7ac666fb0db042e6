import Foundation
import PrefsEngine

/// Writes against raw SQLite, 1 and 64 clients, durability full; GETs and SETs against redis on
/// a Unix socket, with CPU per request; what an Idempotency-Key and a recorded author cost a
/// write; and the latency from a write to a watcher's event.
enum WritesSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        let quick = bench.quick
        // Rates that are compared are measured in turns, three times each (medians): one run of
        // each, seconds apart, compared this VM's drift as much as the code.
        let concurrentBatches = CommittedBatches()
        let concurrentWrites = quick ? 20 : 500
        let rates = try Load.interleavedMedians(rounds: bench.rounds, [
            { try RawSQLite.upsertsPerSecond(count: bench.writes, durability: .full) },
            { try Load.writesPerSecond(daemon, clients: 1, writesPerClient: bench.writes) },
            {
                try concurrentBatches.measuring(daemon) {
                    try Load.writesPerSecond(daemon, clients: 64, writesPerClient: concurrentWrites)
                }
            },
        ])
        let (rawFull, single, concurrent) = (rates[0], rates[1], rates[2])
        table.add("writes/s, 1 client, full", single, baseline: ("raw SQLite FULL txn/s", rawFull), target: "≥ 3000/s (3× etcd ~1000/s), ≥ dconf ~630/s")
        table.add("writes/s, 64 clients, full", concurrent, baseline: ("1 client", single), target: "≥ 10× 1 client")
        table.add("writes/s, 64 clients, full", concurrent, baseline: ("raw SQLite FULL txn/s", rawFull), target: "≥ 5× raw (group commit)")
        // The same rows SQLite alone stores, in transactions of the size the daemon's reached.
        let concurrentFloor = try medianFloor(
            rounds: bench.rounds, writes: 64 * concurrentWrites, perBatch: concurrentBatches.meanSize, keyed: false)
        table.add(
            "writes/s, 64 clients, full", concurrent,
            baseline: ("storage floor writes/s, batches of \(format(concurrentBatches.meanSize))", concurrentFloor.writesPerSecond),
            target: "≥ 0.5×")

        // MARK: GET and SET against redis on a Unix socket, with CPU per request
        let redis = try BenchRedis.start()
        let perConnection = quick ? 500 : 3000
        try daemon.connection().request("PUT", "/v1/prefs/bench.read", body: "42")
        if let redis { try RedisConnection(socketPath: redis.socketPath).command("SET", "bench.read", "42") }
        let unmeasured = "redis-server not installed"
        // Let the write's checkpoint pass, so that the reads' CPU is the reads' own.
        try await BenchDaemon.pastCheckpoint()
        // The same GETs answered by swift-nio alone, with the daemon's answer and none of its work.
        let floor = try BenchNIOFloor(answer: daemon.connection().answerBytes("GET", Load.readTarget))
        let floorSocket = floor.socketPath
        for connections in [1, 16] {
            // At least 10 000 reads per run, so that one run lasts long enough to measure.
            let requests = max(perConnection, (quick ? 2000 : 10_000) / connections)
            let total = connections * requests
            var loads = [
                MeteredLoad(daemon.meter, requests: total) {
                    try Load.getsPerSecond(daemon, connections: connections, requestsPerConnection: requests)
                },
                MeteredLoad(floor.meter, requests: total) {
                    try Load.getsPerSecond(connections: connections, requestsPerConnection: requests) {
                        try BenchConnection(socketPath: floorSocket)
                    }
                },
            ]
            if let redis {
                loads.append(
                    MeteredLoad(redis.meter, requests: total) {
                        try Load.redisPerSecond(redis, connections: connections, requestsPerConnection: requests, writing: false)
                    })
            }
            let measured = try MeteredLoad.inTurns(rounds: bench.rounds, loads)
            let (gets, floorGets, redisGets) = (measured[0], measured[1], measured.count > 2 ? measured[2] : nil)
            let plural = connections == 1 ? "connection" : "connections"
            table.add(
                "GET/s, \(connections) \(plural)", gets.rate, baseline: redisGets.map { ("redis GET/s", $0.rate) },
                target: redis == nil ? unmeasured : connections == 16 ? "≥ 0.9×" : "-")
            table.add(
                "daemon CPU µs per GET, \(connections) \(plural)", gets.cpu, baseline: redisGets.map { ("redis µs per GET", $0.cpu) },
                target: redis == nil ? unmeasured : connections == 16 ? "≤ 1.25×" : "-")
            guard connections == 16 else { continue }
            table.add("GET/s, 16 connections", gets.rate, baseline: ("NIO floor GET/s", floorGets.rate), target: "-")
            table.add("daemon CPU µs per GET, 16 connections", gets.cpu, baseline: ("NIO floor µs per GET", floorGets.cpu), target: "-")
            table.add(
                "NIO floor GET/s, 16 connections", floorGets.rate, baseline: redisGets.map { ("redis GET/s", $0.rate) },
                target: redis == nil ? unmeasured : "-")
            table.add(
                "NIO floor CPU µs per GET, 16 connections", floorGets.cpu, baseline: redisGets.map { ("redis µs per GET", $0.cpu) },
                target: redis == nil ? unmeasured : "-")
        }
        floor.stop()
        // Writes as clients send them — each with an Idempotency-Key, a User-Agent and a
        // Prefs-Reason, its author recorded — against redis's SETs.
        let writers = 16
        let writesPerWriter = quick ? 200 : 1000
        let keyedBatches = CommittedBatches()
        var setLoads = [
            MeteredLoad(daemon.meter, requests: writers * writesPerWriter) {
                try keyedBatches.measuring(daemon) {
                    try Load.writesPerSecond(
                        daemon, clients: writers, writesPerClient: writesPerWriter, idempotent: true, attributed: true)
                }
            }
        ]
        if let redis {
            setLoads.append(
                MeteredLoad(redis.meter, requests: writers * perConnection) {
                    try Load.redisPerSecond(redis, connections: writers, requestsPerConnection: perConnection, writing: true)
                })
        }
        let measuredSets = try MeteredLoad.inTurns(rounds: bench.rounds, setLoads)
        let (sets, redisSets) = (measuredSets[0], measuredSets.count > 1 ? measuredSets[1] : nil)
        table.add(
            "writes/s, 16 connections, full, keyed and attributed", sets.rate,
            baseline: redisSets.map { ("redis SET/s, no persistence", $0.rate) }, target: "-")
        table.add(
            "daemon CPU µs per write, 16 connections, keyed and attributed", sets.cpu,
            baseline: redisSets.map { ("redis µs per SET", $0.cpu) }, target: "-")
        redis?.stop()
        let keyedFloor = try medianFloor(
            rounds: bench.rounds, writes: writers * writesPerWriter, perBatch: keyedBatches.meanSize, keyed: true)
        table.add(
            "daemon CPU µs per write, 16 connections, keyed and attributed", sets.cpu,
            baseline: ("storage floor µs per write, batches of \(format(keyedBatches.meanSize))", keyedFloor.cpuMicrosecondsPerWrite),
            target: "≤ 2×")

        // MARK: A write with an Idempotency-Key against one without, in turns (medians); 1 000
        // writes a connection, so that a round's few tenths of a second of CPU are not the VM's noise.
        let keyedWrites = quick ? 50 : 1000
        let keyedOnlyBatches = CommittedBatches()
        let keyed = try MeteredLoad.inTurns(
            rounds: bench.rounds,
            [false, true].map { idempotent in
                MeteredLoad(daemon.meter, requests: writers * keyedWrites) {
                    let load = { try Load.writesPerSecond(daemon, clients: writers, writesPerClient: keyedWrites, idempotent: idempotent) }
                    return idempotent ? try keyedOnlyBatches.measuring(daemon, load) : try load()
                }
            }
        ).map(\.cpu)
        table.add(
            "daemon CPU µs per write with Idempotency-Key, 16 connections", keyed[1], baseline: ("without", keyed[0]),
            target: "≤ 1.2×")
        // What the key's stored outcome costs the storage alone, in batches of the size the keyed
        // writes' group commit reached: the least a key can add to a write.
        let outcomeBatch = Int(keyedOnlyBatches.meanSize.rounded())
        table.add(
            "CPU µs per stored outcome, the storage alone, batches of \(outcomeBatch)",
            try OutcomeRowCost.microsecondsPerRow(batches: (quick ? 1600 : 8000) / outcomeBatch, perBatch: outcomeBatch),
            baseline: ("daemon µs per write without a key", keyed[0]), target: "-")

        // MARK: A write whose author and reason are recorded against the same write to a daemon
        // that records none (prefsd --no-authors), in turns (medians): both with an
        // Idempotency-Key, a User-Agent and a Prefs-Reason, as clients send them. Both daemons
        // start on new databases, which grow alike: the section's daemon holds every row the
        // section wrote, and its deeper tables cost each write more than the author does.
        let anonymous = try BenchDaemon(prefsd: bench.prefsdURL, arguments: ["--no-authors"])
        let recording = try BenchDaemon(prefsd: bench.prefsdURL)
        let authored = try MeteredLoad.inTurns(
            rounds: bench.rounds,
            [anonymous, recording].map { target in
                MeteredLoad(target.meter, requests: writers * keyedWrites) {
                    try Load.writesPerSecond(target, clients: writers, writesPerClient: keyedWrites, idempotent: true, attributed: true)
                }
            }
        ).map(\.cpu)
        anonymous.stop()
        recording.stop()
        table.add(
            "daemon CPU µs per write, author and reason recorded, 16 connections", authored[1],
            baseline: ("--no-authors", authored[0]), target: "≤ 1.05×")

        // MARK: Write → watcher event latency
        let latency = try Load.watchLatency(daemon, samples: quick ? 200 : 1000)
        table.add("write→event p50, ms", latency.p50 * 1000, baseline: nil, target: "≤ 0.5 ms")
        table.add("write→event p99, ms", latency.p99 * 1000, baseline: nil, target: "≤ 0.5 ms")
        daemon.stop()
    }

    /// The storage floor (``StorageFloor``) measured `rounds` times: the median of each figure.
    private static func medianFloor(rounds: Int, writes: Int, perBatch: Double, keyed: Bool) throws -> StorageFloor.Figures {
        let runs = try (0..<rounds).map { _ in
            try StorageFloor.measure(writes: writes, perBatch: Int(perBatch.rounded()), keyed: keyed)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return StorageFloor.Figures(
            writesPerSecond: median(runs.map(\.writesPerSecond)), cpuMicrosecondsPerWrite: median(runs.map(\.cpuMicrosecondsPerWrite)))
    }

    /// A batch size as a row names it: one decimal.
    private static func format(_ size: Double) -> String {
        String(format: "%.1f", size)
    }
}
