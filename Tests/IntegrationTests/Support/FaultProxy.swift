#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import PrefsSocket
import Synchronization

/// A proxy between a client and a daemon, which a test cuts — a TCP one on loopback (between a
/// device daemon and its upstream), or one on a Unix socket (between a client and the daemon's
/// socket): a partition (every connection closed, new ones closed at once), a cut in the middle of
/// the next answer (the connection closed after so many of the upstream's next bytes, on a
/// connection open or a new one — a device's sync stream stays open), or a cut in the middle of
/// what the client sends next (an upload).
///
/// Each connection is two threads copying bytes, one each way, with blocking calls: a handful
/// of connections in a test.
final class FaultProxy: Sendable {
    /// The port devices connect to; 0 for a proxy on a Unix socket.
    let port: UInt16
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var partitioned = false
        /// Close the connection that carries the upstream's next bytes after this many of them.
        var cutAfter: Int?
        /// Close the connection that carries the client's next bytes after this many more of them.
        var requestCutAfter: Int?
        var sockets: Set<Int32> = []
        var closed = false
        /// Answer a sync stream's request 404, as an upstream without streams does.
        var refusesStreams = false
    }

    /// A proxy to 127.0.0.1:`target`, listening on a free loopback port.
    convenience init(to target: UInt16) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.init(listener: descriptor, port: UInt16(bigEndian: address.sin_port)) { try? LoopbackTCP.descriptor(connectedTo: target) }
    }

    /// A proxy listening on the Unix socket `path`, to the daemon's socket at `target`.
    convenience init(socketPath path: String, to target: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.init(listener: descriptor, port: 0) { Self.connect(toSocket: target) }
    }

    /// A connection to the Unix socket `path`; a daemon whose queue of connections to accept is
    /// full (a busy machine) is tried again for up to 5 seconds. Nil if it cannot be reached.
    private static func connect(toSocket path: String) -> Int32? {
        for _ in 0..<500 {
            do {
                return try UnixSocket.descriptor(connectedTo: path)
            } catch where error.code == EAGAIN {
                usleep(10_000)
            } catch {
                return nil
            }
        }
        return nil
    }

    /// A proxy accepting on `listener` (its `port`, if TCP), each connection to what `connect`
    /// opens (nil: the upstream is not there).
    private init(listener: Int32, port: UInt16, connect: @escaping @Sendable () -> Int32?) {
        self.listener = listener
        self.port = port
        Thread { [self] in acceptLoop(connect: connect) }.start()
    }

    /// Closes every connection, and each new one at once, until ``heal()``.
    func partition() {
        let sockets = state.withLock { state in
            state.partitioned = true
            return state.sockets
        }
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    /// Lets connections through again.
    func heal() {
        state.withLock { $0.partitioned = false }
    }

    /// Cuts the next answer: closes the connection that carries the upstream's next bytes after
    /// `bytes` of them.
    func cutNextAnswer(after bytes: Int) {
        state.withLock { $0.cutAfter = bytes }
    }

    /// Cuts what the client sends next: closes the connection that carries it after `bytes` of
    /// it, whichever requests they are.
    func cutNextRequest(after bytes: Int) {
        state.withLock { $0.requestCutAfter = bytes }
    }

    /// Answers each sync stream's request (`POST /v1/sync:stream`) 404 from now on, as an
    /// upstream without streams does; other requests go through.
    func refuseStreams() {
        state.withLock { $0.refusesStreams = true }
    }

    /// Stops listening and closes every connection.
    func close() {
        let sockets = state.withLock { state in
            state.closed = true
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(connect: @Sendable () -> Int32?) {
        defer { Glibc.close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let (refused, refusesStreams) = state.withLock { state in
                (state.closed || state.partitioned, state.refusesStreams)
            }
            guard !refused, let upstream = connect() else {
                Glibc.close(client)
                continue
            }
            state.withLock { $0.sockets.formUnion([client, upstream]) }
            Thread { [self] in
                if refusesStreams, Self.opensStream(client) {
                    let answer = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                    _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    state.withLock { $0.sockets.subtract([client, upstream]) }
                    Glibc.close(client)
                    Glibc.close(upstream)
                    return
                }
                Thread { [self] in pump(from: upstream, to: client, answers: true) }.start()
                pump(from: client, to: upstream, answers: false)
            }.start()
        }
    }

    /// Whether the first bytes `client` sends begin a sync stream's request (read, not taken).
    private static func opensStream(_ client: Int32) -> Bool {
        let opening = Array("POST /v1/sync:stream".utf8)
        var peeked = [UInt8](repeating: 0, count: opening.count)
        let count = recv(client, &peeked, peeked.count, Int32(MSG_PEEK | MSG_WAITALL))
        return count == opening.count && peeked == opening
    }

    /// Copies bytes until either side closes (or a cut asked for has let its bytes through),
    /// then closes both.
    private func pump(from source: Int32, to destination: Int32, answers: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var count = read(source, &buffer, buffer.count)
            guard count > 0 else { break }
            let cut = state.withLock { state -> Int? in
                if answers {
                    defer { state.cutAfter = nil }
                    return state.cutAfter
                }
                guard let remaining = state.requestCutAfter else { return nil }
                guard count >= remaining else {
                    state.requestCutAfter = remaining - count
                    return nil
                }
                state.requestCutAfter = nil
                return remaining
            }
            if let cut { count = min(count, cut) }
            var sent = 0
            while sent < count {
                let written = buffer[sent..<count].withUnsafeBytes { write(destination, $0.baseAddress, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            if cut != nil { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        let last = state.withLock { state -> Bool in
            // The second pump of a connection to stop closes its descriptors.
            if state.sockets.contains(source) {
                state.sockets.remove(source)
                state.sockets.remove(destination)
                return false
            }
            return true
        }
        if last {
            Glibc.close(source)
            Glibc.close(destination)
        }
    }
}
