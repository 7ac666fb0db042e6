#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Connecting to the daemon's TCP listener on 127.0.0.1, and finding a port for one: the one
/// place a loopback `sockaddr_in` is built, for the tests and the benchmark.
package enum LoopbackTCP {
    /// The descriptor of a blocking connection to 127.0.0.1:`port` (closed on exec), with
    /// `TCP_NODELAY`, and a kernel receive buffer of `receiveBuffer` bytes if given.
    package static func descriptor(connectedTo port: UInt16, receiveBuffer: Int32? = nil) throws(UnixSocket.Failure) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw UnixSocket.Failure(code: errno) }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw UnixSocket.Failure(code: code)
        }
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return descriptor
    }

    /// A loopback port nothing listens on right now (the kernel's pick for port 0).
    package static func freePort() -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length)
                return getsockname(descriptor, $0, &length)
            }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
