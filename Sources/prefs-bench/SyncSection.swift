#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket
import Synchronization

/// Sync between devices through an upstream, real daemons on loopback: a write's way from one
/// device to another's watcher, what the outbox adds to a local write, the bytes on the wire per
/// synced change, a draft's edits between devices, an attachment between them, and three devices'
/// offline writes converging.
enum SyncSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        try latency(bench, into: &table)
        try await localWrites(bench, into: &table)
        try await bytesPerChange(bench, into: &table)
        try await draftEdits(bench, into: &table)
        try await attachmentTravel(bench, into: &table)
        try await convergence(bench, into: &table)
    }

    // MARK: Write on device A → event on device B

    /// Writes on device A one at a time, each waiting for the event on device B, which has it
    /// through the upstream (A's pusher, B's long poll); the baseline is the same write's event
    /// on a watch of A itself, timed in the same loop.
    private static func latency(_ bench: PrefsBench, into table: inout ResultTable) throws {
        let upstream = try SyncUpstream(prefsd: bench.prefsdURL)
        defer { upstream.stop() }
        let a = try upstream.device("laptop", prefsd: bench.prefsdURL)
        defer { a.stop() }
        let b = try upstream.device("phone", prefsd: bench.prefsdURL)
        defer { b.stop() }
        try syncWait([a, b], prefsctl: bench.prefsctlURL)
        let key = "bench.sync.latency"
        let (watchA, watchB) = (try a.watch(key), try b.watch(key))
        let writer = try a.connection()
        let samples = bench.quick ? 50 : 200
        var (local, remote): ([Double], [Double]) = ([], [])
        for index in -10..<samples {
            let start = ContinuousClock.now
            writer.send("PUT", "/v1/prefs/\(key)?scope=\(SyncUpstream.scope)", body: "\(index)")
            try watchA.readEvent(withValue: index)
            let onA = ContinuousClock.now
            try watchB.readEvent(withValue: index)
            let onB = ContinuousClock.now
            guard try writer.readResponse() == 200 else { throw BenchError("a write on device A failed") }
            // The first ten are the warm-up.
            if index >= 0 {
                local.append((onA - start).seconds * 1000)
                remote.append((onB - start).seconds * 1000)
            }
        }
        let (localP50, localP99) = percentiles(local)
        let (remoteP50, remoteP99) = percentiles(remote)
        // For scale: the same loop on a daemon that is no replica (no outbox, no push beside it).
        let plain = try BenchDaemon(prefsd: bench.prefsdURL)
        defer { plain.stop() }
        let alone = try Load.watchLatency(plain, samples: samples)
        table.add("sync: write on device A → event on B, p50, ms", remoteP50, baseline: ("event on A", localP50), target: "-")
        table.add("sync: write on device A → event on B, p99, ms", remoteP99, baseline: ("event on A", localP99), target: "≤ 5×, ≤ 50 ms")
        table.note(
            "sync, A → B: \(samples) writes on A one at a time (Unix socket), each waiting for B's watch event; B has it through the upstream (A's pusher, B's long poll), both online, no proxy. Baseline: the same write's event on a watch of A, timed in the same loop (A pushes beside it). On a daemon with no upstream, the same loop: p50 \(String(format: "%.3f", alone.p50 * 1000)) ms, p99 \(String(format: "%.3f", alone.p99 * 1000)) ms."
        )
    }

    static func percentiles(_ values: [Double]) -> (p50: Double, p99: Double) {
        let sorted = values.sorted()
        return (sorted[sorted.count / 2], sorted[sorted.count * 99 / 100])
    }

    // MARK: A local write on a replica

    /// CPU and wall time per sequential write on a replica whose upstream is offline (its URL a
    /// loopback port nothing listens on: no push succeeds, so only the outbox row is extra),
    /// against the same writes on a daemon with no upstream, in turns (medians).
    private static func localWrites(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let plain = try BenchDaemon(prefsd: bench.prefsdURL)
        defer { plain.stop() }
        let replica = try SyncUpstream.device(
            secret: "no-upstream-t0ken", upstream: "http://127.0.0.1:\(LoopbackTCP.freePort())", prefsd: bench.prefsdURL)
        defer { replica.stop() }
        // Warm-up, as in the watchers section: a fresh daemon's first writes cost less.
        for daemon in [plain, replica] { _ = try Load.microsecondsPerWrite(daemon, count: bench.writes) }
        // The replica's pusher and puller fail and pause, the pause doubling to 5 s: let it grow.
        try await Task.sleep(for: .seconds(3))
        let before = try replica.syncExchanges()
        let measured = try Load.interleavedMedians(
            rounds: bench.rounds,
            [plain, replica].map { daemon in
                {
                    let (wall, cpu) = try Load.microsecondsPerWrite(daemon, count: bench.writes)
                    return [wall, cpu]
                }
            })
        let after = try replica.syncExchanges()
        table.add(
            "sync: daemon CPU µs per local write on a replica, upstream offline", measured[1][1],
            baseline: ("no upstream", measured[0][1]), target: "≤ 1.2×")
        table.add(
            "sync: wall µs per local write on a replica, upstream offline", measured[1][0],
            baseline: ("no upstream", measured[0][0]), target: "≤ 1.2×")
        table.note(
            "sync, local write: \(bench.writes) sequential PUTs from one client, \(bench.rounds) rounds in turns (medians); the replica's upstream URL is a port nothing listens on, so each write adds an outbox row and no push succeeds; the replica's loops tried and failed \(after.failed - before.failed) exchanges (connection refused) during the measured writes, counted in its CPU."
        )
    }

    // MARK: Bytes on the wire per synced change

    /// Changes on device A, one at a time, each waiting until device B's watch has it; every
    /// byte both devices exchange with the upstream (through a counting proxy each), per change.
    private static func bytesPerChange(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let devices = try ProxiedDevices(bench)
        defer { devices.stop() }
        let (a, b) = (devices.a, devices.b)
        let key = "bench.sync.bytes"
        let watcher = try b.watch(key)
        let writer = try a.connection()
        func change(_ value: Int) throws {
            guard try writer.request("PUT", "/v1/prefs/\(key)?scope=\(SyncUpstream.scope)", body: "\(value)") == 200 else {
                throw BenchError("a write on device A failed")
            }
            try watcher.readEvent(withValue: value)
        }
        for value in -5..<0 { try change(value) }
        // Let the exchanges after the warm-up end (A's long poll is sent its own change too).
        try await Task.sleep(for: .milliseconds(300))
        let before = devices.bytes
        let exchangesBefore = (try a.syncExchanges().ok, try b.syncExchanges().ok)
        let count = bench.quick ? 100 : 500
        var changesJSON = 0
        for value in 0..<count {
            try change(value)
            changesJSON += #"{"key":"\#(key)","scope":"\#(SyncUpstream.scope)","value":\#(value)}"#.utf8.count
        }
        // And the exchanges after the last one: B has it, A's own long poll may still be answered.
        try await Task.sleep(for: .milliseconds(300))
        let bytes = devices.bytes - before
        let exchanges = (try a.syncExchanges().ok - exchangesBefore.0, try b.syncExchanges().ok - exchangesBefore.1)
        table.add(
            "sync: bytes on the wire per synced change, A → upstream → B", Double(bytes) / Double(count),
            baseline: ("the change's JSON", Double(changesJSON) / Double(count)), target: "≤ 300 bytes")
        table.note(
            "sync, bytes: \(count) changes of one key on A, one at a time, each waiting until B's watch has it; all bytes both ways of A's and B's TCP connections to the upstream (counting proxies), HTTP framing included, over the changes. Baseline: the length of {\"key\":…,\"scope\":…,\"value\":…} of each change. Exchanges in that time: A \(exchanges.0), B \(exchanges.1) (\(String(format: "%.2f", Double(exchanges.0 + exchanges.1) / Double(count))) a change)."
        )
    }

    // MARK: Three replicas' offline writes converge

    /// Three devices, each partitioned from the upstream (a proxy that resets its connections),
    /// write 1 000 values each as separate local writes — a third on keys all three write, the
    /// rest on keys of their own; the partitions heal, and `prefsctl sync --wait` runs on all
    /// three, twice (the second round brings each the others' changes): the time from the heal,
    /// and the exchanges each device made.
    private static func convergence(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let upstream = try SyncUpstream(prefsd: bench.prefsdURL)
        defer { upstream.stop() }
        let proxies = try (0..<3).map { _ in try BenchProxy(to: upstream.port) }
        defer { proxies.forEach { $0.stop() } }
        var devices: [BenchDaemon] = []
        defer { devices.forEach { $0.stop() } }
        for (index, proxy) in proxies.enumerated() {
            devices.append(try upstream.device("device\(index)", prefsd: bench.prefsdURL, through: proxy.port))
        }
        // Each has its grant and a snapshot before it goes offline.
        try syncWait(devices, prefsctl: bench.prefsctlURL)
        for proxy in proxies { proxy.partition(true) }

        let writesPerDevice = bench.quick ? 300 : 1000
        let connectionsPerDevice = 4
        let writesPerConnection = writesPerDevice / connectionsPerDevice
        let sockets = devices.map(\.socketPath)
        let opened = Atomic<Int>(0)
        // Write n of device d: a key all three write if n is a multiple of 3, else one of its own.
        _ = try Load.rate(
            connections: 3 * connectionsPerDevice, requests: writesPerConnection,
            open: { () throws -> (BenchConnection, Int) in
                let client = opened.add(1, ordering: .relaxed).oldValue
                return (try BenchConnection(socketPath: sockets[client % 3]), client)
            },
            request: { connection, index in
                let (device, slot) = (connection.1 % 3, connection.1 / 3)
                let write = slot * writesPerConnection + index
                let key = write % 3 == 0 ? "bench.shared.k\(write)" : "bench.device\(device).k\(write)"
                let status = try connection.0.request(
                    "PUT", "/v1/prefs/\(key)?scope=\(SyncUpstream.scope)", body: #""d\#(device)-\#(write)""#)
                guard status == 200 else { throw BenchError("an offline write answered \(status)") }
            })
        let sharedKeys = (0..<writesPerDevice).filter { $0 % 3 == 0 }.count
        try await BenchDaemon.pastCheckpoint()
        let before = try devices.map { try $0.syncExchanges() }

        for proxy in proxies { proxy.partition(false) }
        let healed = ContinuousClock.now
        try syncWait(devices, prefsctl: bench.prefsctlURL)
        let firstRound = (ContinuousClock.now - healed).seconds
        let between = try devices.map { try $0.syncExchanges() }
        try syncWait(devices, prefsctl: bench.prefsctlURL)
        let waited = (ContinuousClock.now - healed).seconds
        // What each device's status said then, against the upstream's newest revision.
        let newest = try upstream.revision()
        let whenWaited = try devices.map { try $0.syncCursor() }
        // In step for real: every device's cursor at the upstream's newest revision, its outbox empty.
        while try devices.contains(where: { try $0.syncCursor() != (newest, 0) }) {
            guard ContinuousClock.now - healed < .seconds(60) else { throw BenchError("the devices were not in step after 60 s") }
            usleep(5000)
        }
        let seconds = (ContinuousClock.now - healed).seconds
        let after = try devices.map { try $0.syncExchanges() }
        let exchanges = zip(before, after).map { ($1.ok - $0.ok, $1.failed - $0.failed) }

        // Every device holds what the upstream holds, for every key written.
        var keys: [String] = []
        for write in 0..<writesPerDevice where write % 3 == 0 { keys.append("bench.shared.k\(write)") }
        for device in 0..<3 {
            for write in 0..<writesPerDevice where write % 3 != 0 { keys.append("bench.device\(device).k\(write)") }
        }
        let upstreamValues = try values(of: keys, on: upstream.daemon)
        var differing: [String] = []
        for (index, device) in devices.enumerated() {
            for (key, (held, upstreamHeld)) in zip(keys, zip(try values(of: keys, on: device), upstreamValues)) where held != upstreamHeld {
                differing.append("device\(index) \(key): \(held), upstream: \(upstreamHeld)")
            }
        }
        guard differing.isEmpty else {
            throw BenchError("in step, yet \(differing.count) values differ from the upstream's, as \(differing[0])")
        }

        let (conflicts, losers) = try conflictCount(on: upstream.daemon)
        // Each shared key is written once by each device: one write holds, two lose.
        let lost = 2 * sharedKeys
        // What the devices' own loops did next (the pusher and the long poll wake after their pause).
        try await Task.sleep(for: .seconds(6))
        let later = try devices.map { try $0.syncExchanges() }

        table.add(
            "sync: 3 replicas × \(writesPerDevice) offline writes, until sync --wait ×2 exits 0 on all, s", waited, baseline: nil,
            target: "< 2 s")
        table.add(
            "sync: 3 replicas × \(writesPerDevice) offline writes, until all in step with the upstream, s", seconds, baseline: nil,
            target: "< 2 s")
        table.add(
            "sync: exchanges per device to converge, most", Double(exchanges.map { $0.0 + $0.1 }.max() ?? 0), baseline: nil,
            target: "≤ 2")
        table.add(
            "sync: conflicts recorded on the upstream (losers)", Double(losers),
            baseline: ("shared-key writes that lost", Double(lost)), target: "= 1×")
        let perDevice = exchanges.enumerated().map { index, counted in
            let first = between[index].ok + between[index].failed - before[index].ok - before[index].failed
            return "device\(index): \(counted.0) ok + \(counted.1) failed (\(first) by the end of the first round)"
        }.joined(separator: ", ")
        let laterPerDevice = zip(after, later).map { "\($1.ok + $1.failed - $0.ok - $0.failed)" }.joined(separator: "/")
        table.note(
            "sync, convergence: 3 devices, each behind a proxy that resets its connections (synced once before), write \(writesPerDevice) values each over \(connectionsPerDevice) concurrent connections, separate local writes, \(sharedKeys) on keys all three write and the rest on keys of their own; then the proxies heal and prefsctl sync --wait runs on all three at once, twice (the first round took \(String(format: "%.3f", firstRound)) s). When the second round exited 0, the devices' cursors were \(whenWaited.map { "\($0.cursor)" }.joined(separator: "/")) (outboxes \(whenWaited.map { "\($0.outbox)" }.joined(separator: "/"))) of the upstream's \(newest); all in step (GET /v1/sync: cursor = the upstream's newest revision, outbox 0) at \(String(format: "%.3f", seconds)) s. Exchanges from the heal until all were in step (prefsd_sync_exchanges_total): \(perDevice); in the 6 s after it: \(laterPerDevice). Every value of every device equals the upstream's. The upstream lists \(conflicts) conflicts with \(losers) losers; \(sharedKeys) shared keys × 2 losing writes = \(lost)."
        )
    }

    /// The value `GET /v1/prefs/KEY?scope=` answers for each key on `daemon`, as JSON text (the
    /// whole body where it has none); revisions are each store's own.
    private static func values(of keys: [String], on daemon: BenchDaemon) throws -> [String] {
        let connection = try daemon.connection()
        return try keys.map { key in
            let body = try connection.requestBody("GET", "/v1/prefs/\(key)?scope=\(SyncUpstream.scope)")
            guard let answer = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], let value = answer["value"],
                let text = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed])
            else { return body }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The conflicts `GET /v1/conflicts` lists on `daemon`, and their losers.
    private static func conflictCount(on daemon: BenchDaemon) throws -> (conflicts: Int, losers: Int) {
        let body = try daemon.connection().requestBody("GET", "/v1/conflicts?limit=10000")
        guard let listed = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let conflicts = listed["conflicts"] as? [[String: Any]]
        else { throw BenchError("the upstream's conflicts are no list: \(body.prefix(200))") }
        return (conflicts.count, conflicts.reduce(0) { $0 + (($1["losers"] as? [Any])?.count ?? 0) })
    }
}
