#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket

/// An upstream prefsd on a loopback TCP listener (`--listen`, `--token-file`), and the device
/// daemons that sync with it (`prefsd --upstream URL --upstream-token-file FILE`), each a writer
/// token at ``scope`` named for it.
final class SyncUpstream {
    /// The scope the devices' tokens are bounded by, where the benchmark writes.
    static let scope = "/accounts/alice"

    let daemon: BenchDaemon
    /// The port of its TCP listener.
    let port: UInt16

    init(prefsd: URL) throws {
        let folder = try Self.newFolder()
        let tokenFile = try Self.secretFile("bench-upstream-t0ken", in: folder)
        port = LoopbackTCP.freePort()
        daemon = try BenchDaemon(
            prefsd: prefsd, arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile], folder: folder)
    }

    /// A device daemon syncing as a new writer token `name`, through the proxy listening on
    /// `port` (the upstream's own port by default).
    func device(_ name: String, prefsd: URL, through port: UInt16? = nil) throws -> BenchDaemon {
        let created = try daemon.connection().requestBody(
            "POST", "/v1/tokens", body: #"{"name":"\#(name)","role":"writer","scope":"\#(Self.scope)"}"#)
        guard let start = created.range(of: #""secret":""#), let end = created[start.upperBound...].firstIndex(of: "\"") else {
            throw BenchError("no token was created: \(created)")
        }
        return try Self.device(
            secret: String(created[start.upperBound..<end]), upstream: "http://127.0.0.1:\(port ?? self.port)", prefsd: prefsd)
    }

    /// A device daemon of the upstream at `upstream`, syncing as the token whose secret is `secret`.
    static func device(secret: String, upstream: String, prefsd: URL) throws -> BenchDaemon {
        let folder = try newFolder()
        let tokenFile = try secretFile(secret, in: folder)
        return try BenchDaemon(prefsd: prefsd, arguments: ["--upstream", upstream, "--upstream-token-file", tokenFile], folder: folder)
    }

    func stop() { daemon.stop() }

    /// The upstream's newest revision (`GET /v1/status`).
    func revision() throws -> Int {
        let status = try daemon.connection().requestBody("GET", "/v1/status")
        guard let answer = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any],
            let revision = answer["revision"] as? Int
        else { throw BenchError("the upstream's status has no revision: \(status.prefix(200))") }
        return revision
    }

    private static func newFolder() throws -> URL {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A file of `folder` holding `secret`, readable by its owner only.
    private static func secretFile(_ secret: String, in folder: URL) throws -> String {
        let path = folder.appending(path: "token").path
        try secret.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }
}

extension BenchDaemon {
    /// `prefsd_sync_exchanges_total` of a device, `ok` and `failed`.
    func syncExchanges() throws -> (ok: Int, failed: Int) {
        let counts = try metrics([#"prefsd_sync_exchanges_total{outcome="ok"}"#, #"prefsd_sync_exchanges_total{outcome="failed"}"#])
        return (Int(counts[0]), Int(counts[1]))
    }

    /// A device's cursor (the upstream's revision it has taken in up to) and outbox, as
    /// `GET /v1/sync` says.
    func syncCursor() throws -> (cursor: Int, outbox: Int) {
        let status = try connection().requestBody("GET", "/v1/sync")
        guard let answer = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any],
            let cursor = answer["cursor"] as? Int, let outbox = answer["outbox"] as? Int
        else { throw BenchError("the device's sync status has no cursor: \(status.prefix(200))") }
        return (cursor, outbox)
    }

    /// Opens a watch of `key` at ``SyncUpstream/scope``, once the daemon has it.
    func watch(_ key: String) throws -> BenchConnection {
        let watcher = try connection()
        watcher.send("GET", "/v1/watch?key=\(key)&scope=\(SyncUpstream.scope)")
        while try watcher.readLine() != ": watching" {}
        return watcher
    }
}

extension BenchConnection {
    /// Reads watch events until one whose value is `value` (a JSON number), skipping any other.
    func readEvent(withValue value: Int) throws {
        while true {
            let line = try readLine()
            guard line.hasPrefix("data:") else { continue }
            if line.contains(#""value":\#(value),"#) || line.contains(#""value":\#(value)}"#) { return }
        }
    }
}

/// Runs `prefsctl --socket SOCKET sync --wait` on every device at once; returns once all have
/// exited 0 (each in step with its upstream), or throws.
func syncWait(_ devices: [BenchDaemon], prefsctl: URL, timeout: Int = 30) throws {
    let pids = try devices.map { device in
        try spawn(prefsctl, ["--socket", device.socketPath, "sync", "--wait", "--timeout", "\(timeout)"])
    }
    var failures: [String] = []
    for (pid, device) in zip(pids, devices) {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        if status != 0 { failures.append("\(device.socketPath): \(status >> 8)") }
    }
    guard failures.isEmpty else { throw BenchError("prefsctl sync --wait failed: \(failures.joined(separator: ", "))") }
}

/// Starts `executable` with `arguments`, its output discarded (errors shown), by posix_spawn:
/// Foundation's Process polls for the exit, adding tens of ms to what is timed.
func spawn(_ executable: URL, _ arguments: [String]) throws -> pid_t {
    let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var pid: pid_t = 0
    guard posix_spawn(&pid, executable.path, &actions, nil, argv, environ) == 0 else {
        throw BenchError("cannot run \(executable.path)")
    }
    return pid
}
