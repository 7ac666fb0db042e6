#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Connecting to a Unix stream socket by its path: the one place its `sockaddr_un` is built, for
/// the client, the daemon's check for a live daemon on its socket, and the benchmark; and
/// receiving from one.
package enum UnixSocket {
    /// Why a connection could not be made: the `errno` of the call that failed
    /// (`ENAMETOOLONG` for a path longer than a socket address holds).
    package struct Failure: Error, Sendable {
        package let code: Int32
    }

    /// The descriptor of a connection to the socket at `path` (closed on exec), blocking unless
    /// `nonBlocking`, with a kernel receive buffer of `receiveBuffer` bytes if given. A
    /// non-blocking connection to a daemon whose queue of connections to accept is full fails
    /// with `EAGAIN`: try again later.
    package static func descriptor(connectedTo path: String, nonBlocking: Bool = false, receiveBuffer: Int32? = nil)
        throws(Failure) -> Int32
    {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { throw Failure(code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8)
            buffer[path.utf8.count] = 0
        }
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let descriptor = socket(AF_UNIX, flags, 0)
        guard descriptor >= 0 else { throw Failure(code: errno) }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(code: code)
        }
        return descriptor
    }

    /// Receives up to `count` bytes into `buffer` from the blocking socket `descriptor`, as
    /// `recv` does (its result, and `errno` when it is -1), once `poll` has seen input.
    ///
    /// A thread blocked in `recv` on a Unix socket is also woken each time the peer reads what it
    /// sent — the kernel signals the freed space on the same wait queue — and sleeps again. The
    /// peer's thread pays for that wake-up: for the daemon, more CPU per request than HTTP
    /// parsing. `poll` for input is woken by input only, as event-driven clients (epoll) are.
    package static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&request, 1, -1) < 0, errno == EINTR {}
        return recv(descriptor, buffer, count, 0)
    }
}

extension UnixSocket {
    /// Whether something accepts connections on the socket at `path`.
    package static func isAnswering(_ path: String) -> Bool {
        guard let descriptor = try? descriptor(connectedTo: path) else { return false }
        close(descriptor)
        return true
    }
}
