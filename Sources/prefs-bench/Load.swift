#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PrefsClientCore
import Synchronization

/// The load generators: each runs its clients on threads of their own with blocking keep-alive
/// connections, and measures wall time.
enum Load {
    /// Requests per second of `connections` clients at once, each on a thread of its own with a
    /// connection from `open`, sending `requests` requests one after the other with `request`.
    ///
    /// The clock runs from when every client has its connection until the last one is done:
    /// starting threads and connecting are not part of the rate.
    static func rate<Connection>(
        connections: Int, requests: Int, open: @escaping @Sendable () throws -> Connection,
        request: @escaping @Sendable (Connection, Int) throws -> Void
    ) throws -> Double {
        let connected = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let failure = FailureBox()
        for _ in 0..<connections {
            connected.enter()
            done.enter()
            Thread {
                defer { done.leave() }
                let connection: Connection
                do {
                    connection = try open()
                } catch {
                    failure.record(error)
                    connected.leave()
                    return
                }
                connected.leave()
                start.wait()
                do {
                    for index in 0..<requests { try request(connection, index) }
                } catch {
                    failure.record(error)
                }
            }.start()
        }
        connected.wait()
        let began = ContinuousClock.now
        for _ in 0..<connections { start.signal() }
        done.wait()
        if let error = failure.error { throw error }
        return Double(connections * requests) / (ContinuousClock.now - began).seconds
    }

    /// Runs each measurement `rounds` times, taking turns (a, b, c, a, b, c, …) so that the
    /// machine's drift touches them alike, and returns each one's median.
    static func interleavedMedians(rounds: Int, _ measurements: [() throws -> Double]) throws -> [Double] {
        try interleavedMedians(rounds: rounds, measurements.map { measure in { [try measure()] } }).map { $0[0] }
    }

    /// ``interleavedMedians(rounds:_:)`` for measurements of several values each (a rate and its
    /// CPU cost): the median of each value.
    static func interleavedMedians(rounds: Int, _ measurements: [() throws -> [Double]]) throws -> [[Double]] {
        var results = Array(repeating: [[Double]](), count: measurements.count)
        for _ in 0..<rounds {
            for (index, measure) in measurements.enumerated() { results[index].append(try measure()) }
        }
        return results.map { runs in
            (0..<(runs.first?.count ?? 0)).map { value in runs.map { $0[value] }.sorted()[runs.count / 2] }
        }
    }

    /// Writes per second of `clients` clients, each writing its own key at ten scopes, spread
    /// over `daemons` in turn (hosts of one database); with `idempotent`, each write carries an
    /// `Idempotency-Key` of its own, as `PrefsClient` and `prefsctl` send; with `attributed`, a
    /// `User-Agent` and a `Prefs-Reason` too.
    static func writesPerSecond(
        _ daemons: [BenchDaemon], clients: Int, writesPerClient: Int, idempotent: Bool = false, attributed: Bool = false
    ) throws -> Double {
        let sockets = daemons.map(\.socketPath)
        let counter = Atomic<Int>(0)
        return try rate(connections: clients, requests: writesPerClient, open: { () throws -> (BenchConnection, Int) in
            let client = counter.add(1, ordering: .relaxed).oldValue
            return (try BenchConnection(socketPath: sockets[client % sockets.count]), client)
        }) { connection, index in
            var headers = idempotent ? ["Idempotency-Key: \(IdempotencyKey.make())"] : []
            if attributed { headers += ["User-Agent: prefs-bench/1", "Prefs-Reason: bench%20write%20\(index)"] }
            let status = try connection.0.request(
                "PUT", "/v1/prefs/bench.c\(connection.1)?scope=/s\(index % 10)", body: "\(index)", headers: headers)
            guard status == 200 else { throw BenchError("write answered \(status)") }
        }
    }

    /// Reads per second of one key over `connections` keep-alive connections to the daemon's
    /// socket.
    static func getsPerSecond(_ daemon: BenchDaemon, connections: Int, requestsPerConnection: Int) throws -> Double {
        let socket = daemon.socketPath
        return try getsPerSecond(connections: connections, requestsPerConnection: requestsPerConnection) {
            try BenchConnection(socketPath: socket)
        }
    }

    /// The target of the GETs the read rates send: one key, at a scope where it is not set.
    static let readTarget = "/v1/prefs/bench.read?scope=/accounts/alice"

    /// Reads per second of one key over `connections` keep-alive connections from `open`, each
    /// request with the header lines `headers`.
    static func getsPerSecond(
        connections: Int, requestsPerConnection: Int, headers: [String] = [], open: @escaping @Sendable () throws -> BenchConnection
    ) throws -> Double {
        try requestsPerSecond(
            "GET", readTarget, connections: connections, requestsPerConnection: requestsPerConnection, headers: headers, open: open)
    }

    /// Requests per second of `method` `target` (with `body`, and the header lines `headers`),
    /// each answered 200, over `connections` keep-alive connections from `open`.
    static func requestsPerSecond(
        _ method: String, _ target: String, body: String? = nil, connections: Int, requestsPerConnection: Int,
        headers: [String] = [], open: @escaping @Sendable () throws -> BenchConnection
    ) throws -> Double {
        try rate(connections: connections, requests: requestsPerConnection, open: open) { connection, _ in
            let status = try connection.request(method, target, body: body, headers: headers)
            guard status == 200 else { throw BenchError("\(method) \(target) answered \(status)") }
        }
    }

    /// Redis commands per second over `connections` connections: `GET bench.read` or `SET bench.cN i`.
    static func redisPerSecond(_ redis: BenchRedis, connections: Int, requestsPerConnection: Int, writing: Bool) throws -> Double {
        let socket = redis.socketPath
        let counter = Atomic<Int>(0)
        return try rate(connections: connections, requests: requestsPerConnection, open: { () throws -> (RedisConnection, Int) in
            (try RedisConnection(socketPath: socket), counter.add(1, ordering: .relaxed).oldValue)
        }) { connection, index in
            if writing {
                try connection.0.command("SET", "bench.c\(connection.1)", "\(index)")
            } else {
                try connection.0.command("GET", "bench.read")
            }
        }
    }

    /// Writes per second of `clients` clients on one daemon.
    static func writesPerSecond(
        _ daemon: BenchDaemon, clients: Int, writesPerClient: Int, idempotent: Bool = false, attributed: Bool = false
    ) throws -> Double {
        try writesPerSecond([daemon], clients: clients, writesPerClient: writesPerClient, idempotent: idempotent, attributed: attributed)
    }

    /// Time from sending a write to `daemon` to its event arriving at a watcher on another
    /// connection, to `watching` (another host of the same database) or to the same daemon.
    static func watchLatency(_ daemon: BenchDaemon, watching: BenchDaemon? = nil, samples: Int) throws -> (p50: Double, p99: Double) {
        let watcher = try BenchConnection(socketPath: (watching ?? daemon).socketPath)
        watcher.send("GET", "/v1/watch?key=bench.latency")
        while try watcher.readLine() != ": watching" {}
        let writer = try BenchConnection(socketPath: daemon.socketPath)
        var latencies: [Double] = []
        for index in 0..<samples {
            let start = ContinuousClock.now
            writer.send("PUT", "/v1/prefs/bench.latency", body: "\(index)")
            while !(try watcher.readLine()).hasPrefix("data:") {}
            latencies.append((ContinuousClock.now - start).seconds)
            _ = try writer.readResponse()
        }
        latencies.sort()
        return (latencies[latencies.count / 2], latencies[latencies.count * 99 / 100])
    }

    /// Mean microseconds per sequential write from one client: wall time, and the daemon's CPU.
    static func microsecondsPerWrite(_ daemon: BenchDaemon, count: Int) throws -> (wall: Double, cpu: Double) {
        let connection = try daemon.connection()
        for index in 0..<100 { try connection.request("PUT", "/v1/prefs/bench.cost", body: "\(index)") }
        let cpu = daemon.meter.cpuSeconds
        let start = ContinuousClock.now
        for index in 0..<count { try connection.request("PUT", "/v1/prefs/bench.cost", body: "\(index)") }
        let wall = (ContinuousClock.now - start).seconds
        return (wall / Double(count) * 1e6, (daemon.meter.cpuSeconds - cpu) / Double(count) * 1e6)
    }

    /// Opens `count` watch streams on keys nobody writes, and waits until the daemon has them all.
    static func openIdleWatchers(_ daemon: BenchDaemon, count: Int) throws -> [BenchConnection] {
        var watchers: [BenchConnection] = []
        watchers.reserveCapacity(count)
        for index in 0..<count {
            let watcher = try BenchConnection(socketPath: daemon.socketPath, receiveBuffer: 4096)
            watcher.send("GET", "/v1/watch?key=idle.k\(index)")
            watchers.append(watcher)
        }
        // A watcher is subscribed once its answer's head (and ": watching") has arrived.
        for watcher in watchers { while try watcher.readLine() != ": watching" {} }
        return watchers
    }

    /// Waits until the daemon reports `count` open watches.
    static func waitForWatchers(_ daemon: BenchDaemon, count: Int) throws {
        let connection = try daemon.connection()
        for _ in 0..<5000 {
            let body = try connection.requestBody("GET", "/v1/status")
            if body.contains("\"watchers\":\(count),") || body.contains("\"watchers\":\(count)}") { return }
            usleep(2000)
        }
        throw BenchError("the daemon did not reach \(count) watchers")
    }

    /// Median wall milliseconds of running a command to completion, spawned and reaped with
    /// posix_spawn/waitpid (Foundation's Process polls for the exit, adding tens of ms).
    static func processMilliseconds(_ executable: URL, _ arguments: [String], runs: Int) throws -> Double {
        var times: [Double] = []
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for _ in 0..<runs {
            var pid: pid_t = 0
            let start = ContinuousClock.now
            guard posix_spawn(&pid, executable.path, &actions, nil, argv, environ) == 0 else {
                throw BenchError("cannot run \(executable.path)")
            }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            times.append((ContinuousClock.now - start).seconds * 1000)
            guard status == 0 else { throw BenchError("\(executable.lastPathComponent) failed with \(status)") }
        }
        times.sort()
        return times[times.count / 2]
    }
}

extension BenchDaemon {
    func connection() throws -> BenchConnection { try BenchConnection(socketPath: socketPath) }
}

/// The first error of several threads.
final class FailureBox: Sendable {
    private let stored = Mutex<(any Error)?>(nil)
    func record(_ error: any Error) { stored.withLock { if $0 == nil { $0 = error } } }
    var error: (any Error)? { stored.withLock { $0 } }
}
