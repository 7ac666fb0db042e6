#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket
import PrefsClientCore
import TestHarness

/// A bare Unix-socket (or TCP) connection that reads only when told to: a watcher that falls
/// behind, or a client of the TCP listener.
final class RawSocket: Sendable {
    private let descriptor: Int32

    init(path: String) throws {
        // A small receive buffer, so the daemon feels a slow reader quickly.
        descriptor = try UnixSocket.descriptor(connectedTo: path, receiveBuffer: 4096)
        Self.setReceiveTimeout(descriptor)
    }

    /// A TCP connection to 127.0.0.1:`port`.
    init(tcpPort port: UInt16) throws {
        // A small receive buffer, as on the Unix socket: the daemon feels a slow reader quickly.
        do {
            descriptor = try LoopbackTCP.descriptor(connectedTo: port, receiveBuffer: 4096)
        } catch {
            throw POSIXError(POSIXErrorCode(rawValue: error.code) ?? .ECONNREFUSED)
        }
        Self.setReceiveTimeout(descriptor)
    }

    /// A receive timeout (10 s unless told), so a test never hangs on a silent daemon.
    private static func setReceiveTimeout(_ descriptor: Int32, seconds: Int = 10) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Waits at most `seconds` for each read from now on.
    func setReceiveTimeout(seconds: Int) {
        Self.setReceiveTimeout(descriptor, seconds: seconds)
    }

    /// What one read gives, on a thread of its own: `.closed` when the peer has closed, `.timedOut`
    /// when nothing came within the receive timeout.
    func receive() async -> Received {
        await onOwnThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(self.descriptor, &buffer, buffer.count, 0)
            if count > 0 { return .data(Data(buffer[0..<count])) }
            return count == 0 ? .closed : .timedOut
        }
    }

    /// What one read gives.
    enum Received: Equatable {
        case data(Data)
        case closed
        case timedOut
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Sends `data` whole.
    func send(_ data: Data) {
        data.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = Glibc.send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if count <= 0 { return }
                sent += count
            }
        }
    }

    /// Closes the sending side only, as a client does that has nothing more to say.
    func shutdownSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Reads until the peer closes (or 10 s pass without data), on a thread of its own.
    func readToEnd() async -> String {
        await read(until: nil)
    }

    /// Reads until what has arrived contains `marker` (or the peer closes, or 10 s pass), on a
    /// thread of its own; returns all of it.
    func read(until marker: String) async -> String {
        await read(until: (Data(marker.utf8), ContinuousClock.now + .seconds(10)))
    }

    private func read(until stop: (marker: Data, deadline: ContinuousClock.Instant)?) async -> String {
        await onOwnThread {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while stop.map({ data.range(of: $0.marker) == nil && ContinuousClock.now < $0.deadline }) ?? true {
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
