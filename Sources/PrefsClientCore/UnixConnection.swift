#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PrefsSocket
import PrefsKit

/// A blocking connection to the daemon's Unix socket, for a caller whose thread has nothing
/// else to do (``UnixSocketTransport/sendBlocking(_:)``).
final class UnixConnection: Sendable {
    private let descriptor: Int32
    let path: String

    /// Connects, or throws `unreachable` saying why and how to start the daemon.
    init(path: String) throws {
        self.path = path
        do {
            descriptor = try UnixSocket.descriptor(connectedTo: path)
        } catch {
            throw DaemonSocketError.unreachable(path, error.code)
        }
    }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE || errno == ECONNRESET {
                        // Closed before it read the request: refused, most likely (another user).
                        throw DaemonSocketError.closedEarly(path, beforeAnswer: true, .malformed("closed while the request was sent"))
                    }
                    throw DaemonSocketError.failed(path, "closed the connection", errno)
                }
                offset += written
            }
        }
    }

    /// The next bytes, or nil at the end of the stream.
    func read() throws -> Data? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { UnixSocket.receive(descriptor, into: $0.baseAddress!, count: $0.count) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count == 0 { return nil }
            if errno == EINTR { continue }
            if errno == ECONNRESET || errno == EBADF || errno == EINVAL { return nil }
            throw DaemonSocketError.failed(path, "could not be read from", errno)
        }
    }

    func close() {
        close_(descriptor)
    }
}

private func close_(_ descriptor: Int32) {
    _ = close(descriptor)
}
