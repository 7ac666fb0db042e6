#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestHarness

/// A bare Unix-socket (or TCP) connection that reads only when told to: a watcher that falls
/// behind, or a client of the TCP listener.
final class RawSocket: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8)
            buffer[path.utf8.count] = 0
        }
        // A small receive buffer, so the daemon feels a slow reader quickly.
        var size: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        try Self.connect(descriptor, to: &address)
    }

    /// A TCP connection to 127.0.0.1:`port`.
    init(tcpPort port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        try Self.connect(descriptor, to: &address)
    }

    /// Connects `descriptor` to `address` (a `sockaddr_un` or `sockaddr_in`), with a 10 s
    /// receive timeout so a test never hangs on a silent daemon.
    private static func connect<Address>(_ descriptor: Int32, to address: inout Address) throws {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Closes the sending side only, as a client does that has nothing more to say.
    func shutdownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Reads until the peer closes (or 10 s pass without data), on a thread of its own.
    func readToEnd() async -> String {
        await onOwnThread {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = recv(self.descriptor, &buffer, buffer.count, 0)
                if count <= 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// `id:`/`event:` pairs from a raw (chunked) text/event-stream answer. Chunk-size lines are
/// harmless: they hold no field.
func parseEvents(_ body: String) -> [(id: Int64?, event: String)] {
    // "\r\n" is one Character in Swift: make every line end a plain "\n" before splitting.
    body.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n").compactMap { block in
        var id: Int64?
        var event: String?
        for line in block.split(separator: "\n") {
            if line.hasPrefix("id: ") { id = Int64(line.dropFirst(4)) }
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
        }
        return event.map { (id, $0) }
    }
}
