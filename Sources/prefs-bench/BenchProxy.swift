#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket
import Synchronization

/// A loopback TCP proxy to 127.0.0.1:`target` that counts the bytes it carries both ways — all
/// of them, HTTP framing included — and can cut its link (a partition): while partitioned, its
/// connections are reset and a new one is closed as soon as it is accepted.
///
/// A thread accepts; each connection has a thread per direction, copying with blocking
/// `recv`/`send`.
final class BenchProxy: Sendable {
    /// The port the proxy listens on.
    let port: UInt16
    private let target: UInt16
    private let listener: Int32
    private let carried = Atomic<Int>(0)
    private let state = Mutex<State>(State())

    private struct State {
        var partitioned = false
        var stopped = false
        /// Both ends of each open connection.
        var open: [Int: (Int32, Int32)] = [:]
        var next = 0
    }

    /// Starts a proxy to 127.0.0.1:`target`, partitioned from the start if `partitioned`.
    init(to target: UInt16, partitioned: Bool = false) throws {
        self.target = target
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("proxy: socket: \(String(cString: strerror(errno)))") }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 128) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw BenchError("proxy: cannot listen on loopback: \(String(cString: strerror(errno)))")
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        state.withLock { $0.partitioned = partitioned }
        Thread { [self] in acceptLoop() }.start()
    }

    /// Bytes carried so far, both ways.
    var bytes: Int { carried.load(ordering: .relaxed) }

    /// Cuts the link (every connection reset, new ones closed at once), or heals it.
    func partition(_ partitioned: Bool) {
        // Under the lock: a connection's ends are closed (and their numbers free for reuse)
        // only once it has left `open`.
        state.withLock { state in
            state.partitioned = partitioned
            guard partitioned else { return }
            for (client, server) in state.open.values {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(server, Int32(SHUT_RDWR))
            }
        }
    }

    /// Stops accepting and ends every connection.
    func stop() {
        state.withLock { $0.stopped = true }
        partition(true)
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            let (partitioned, stopped) = state.withLock { ($0.partitioned, $0.stopped) }
            if stopped {
                if client >= 0 { close(client) }
                close(listener)
                return
            }
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            if partitioned {
                reset(client)
                continue
            }
            guard let server = try? LoopbackTCP.descriptor(connectedTo: target) else {
                reset(client)
                continue
            }
            var noDelay: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let id = state.withLock { state in
                state.next += 1
                state.open[state.next] = (client, server)
                return state.next
            }
            let ended = Ends()
            let finish: @Sendable () -> Void = { [self] in
                // The second direction to end closes both ends.
                guard ended.count.add(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
                state.withLock { _ = $0.open.removeValue(forKey: id) }
                close(client)
                close(server)
            }
            Thread { [self] in
                copy(from: client, to: server)
                finish()
            }.start()
            Thread { [self] in
                copy(from: server, to: client)
                finish()
            }.start()
        }
    }

    /// Copies until `source` ends, then ends `destination`'s sending side.
    private func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        copying: while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress!, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            carried.add(count, ordering: .relaxed)
            var offset = 0
            while offset < count {
                let sent = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { break copying }
                offset += sent
            }
        }
        shutdown(destination, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
    }

    /// How many directions of a connection have ended.
    private final class Ends: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Closes an accepted connection with a reset, as a partitioned link would end it.
    private func reset(_ descriptor: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(descriptor)
    }
}
