#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket
import PrefsClientCore

/// A redis-server the benchmark starts on a Unix socket, with persistence off, as the baseline
/// for the daemon's GET and SET rates and CPU per request (the targets are set against redis).
final class BenchRedis {
    private let server: BenchServer
    let socketPath: String

    /// Starts redis-server, or returns nil when it is not installed.
    static func start() throws -> BenchRedis? {
        guard let executable = executableOnPath("redis-server") else { return nil }
        return try BenchRedis(executable)
    }

    private init(_ executable: URL) throws {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-redis-\(UUID().uuidString.prefix(8))")
        let socketPath = folder.appending(path: "redis.sock").path
        self.socketPath = socketPath
        server = try BenchServer(
            executable, folder: folder,
            arguments: {
                [
                    "--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
                    "--dir", $0.path, "--loglevel", "warning",
                ]
            },
            ready: { (try? RedisConnection(socketPath: socketPath).command("PING")) != nil })
    }

    /// Its CPU time and memory.
    var meter: ProcessMeter { server.meter }

    func stop() {
        server.stop()
    }
}

/// A blocking connection speaking RESP, as lean as ``BenchConnection``.
final class RedisConnection {
    private let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var pending: [UInt8] = []

    init(socketPath: String) throws {
        descriptor = try connectUnixSocket(socketPath)
    }

    deinit { close(descriptor) }

    /// Sends a command and reads its reply (a status, an integer or a bulk string); throws an error reply.
    @discardableResult
    func command(_ parts: String...) throws -> String {
        var text = "*\(parts.count)\r\n"
        for part in parts { text += "$\(part.utf8.count)\r\n\(part)\r\n" }
        _ = text.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let line = try readLine()
        switch line.first {
        case "+", ":": return String(line.dropFirst())
        case "$":
            let length = Int(line.dropFirst()) ?? -1
            guard length >= 0 else { return "" }
            while pending.count < length + 2 { try fill() }
            defer { pending.removeFirst(length + 2) }
            return String(decoding: pending[0..<length], as: UTF8.self)
        default: throw BenchError("redis answered \(line)")
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                defer { pending.removeFirst(end + 1) }
                return String(decoding: pending[0..<max(0, end - 1)], as: UTF8.self)
            }
            try fill()
        }
    }

    private func fill() throws {
        let count = buffer.withUnsafeMutableBytes { UnixSocket.receive(descriptor, into: $0.baseAddress!, count: $0.count) }
        guard count > 0 else { throw BenchError("redis closed the connection") }
        pending.append(contentsOf: buffer[0..<count])
    }
}
