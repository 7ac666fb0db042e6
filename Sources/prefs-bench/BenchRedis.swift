#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A redis-server the benchmark starts on a Unix socket, with persistence off, as the baseline
/// for the daemon's GET and SET rates and CPU per request (DESIGN.md measures against redis).
final class BenchRedis {
    let folder: URL
    let socketPath: String
    let process: Process

    /// Starts redis-server, or returns nil when it is not installed.
    static func start() throws -> BenchRedis? {
        guard let server = executableOnPath("redis-server") else { return nil }
        return try BenchRedis(server: server)
    }

    private init(server: URL) throws {
        folder = URL(fileURLWithPath: "/tmp/prefs-bench-redis-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        socketPath = folder.appending(path: "redis.sock").path
        process = Process()
        process.executableURL = server
        process.arguments = [
            "--port", "0", "--unixsocket", socketPath, "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
            "--dir", folder.path, "--loglevel", "warning",
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        for _ in 0..<10_000 {
            if let connection = try? RedisConnection(socketPath: socketPath), (try? connection.command("PING")) != nil { return }
            guard process.isRunning else { throw BenchError("redis-server exited with \(process.terminationStatus)") }
            usleep(500)
        }
        throw BenchError("redis-server did not answer")
    }

    /// Its CPU time and memory.
    var meter: ProcessMeter { ProcessMeter(pid: process.processIdentifier) }

    /// A redis still running when the benchmark lets go of it (a section failed) is stopped.
    deinit {
        if process.isRunning { stop() }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
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
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { throw BenchError("redis closed the connection") }
        pending.append(contentsOf: buffer[0..<count])
    }
}
