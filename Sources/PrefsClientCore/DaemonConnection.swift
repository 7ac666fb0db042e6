#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import PrefsSocket
import PrefsKit
import Synchronization

/// A non-blocking connection to the daemon's Unix socket, for async code: a read or write that
/// would block suspends on the ``SocketReactor`` instead of holding a thread. One task uses it
/// at a time; it is closed by ``close()``, or when released.
final class DaemonConnection: Sendable {
    /// The daemon's socket.
    let path: String
    private let descriptor: Int32
    private let isClosed = Atomic(false)

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Connects, or throws `unreachable` saying why and how to start the daemon. A daemon whose
    /// queue of connections to accept is full is tried again until `timeout`.
    static func open(path: String, timeout: Duration) async throws -> DaemonConnection {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return DaemonConnection(path: path, descriptor: try UnixSocket.descriptor(connectedTo: path, nonBlocking: true))
            } catch where error.code == EAGAIN && ContinuousClock.now + pause < deadline {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(100))
            } catch {
                throw DaemonSocketError.unreachable(path, error.code)
            }
        }
    }

    /// Writes all of `data`. With `stoppingAtAnswer`, stops as soon as the daemon answers or
    /// hangs up — as it does when it refuses a request before reading all of its body — and
    /// returns false. `timeout` bounds each wait for room to write.
    func write(_ data: Data, stoppingAtAnswer: Bool, timeout: Duration?) async throws -> Bool {
        var offset = 0
        if stoppingAtAnswer, hasInput { return false }
        while offset < data.count {
            let written = data.withUnsafeBytes { buffer in
                send(descriptor, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                let events = Int16(POLLOUT) | (stoppingAtAnswer ? Int16(POLLIN) : 0)
                let ready = try await wait(for: events, timeout: timeout)
                if stoppingAtAnswer, ready & Int16(POLLIN | POLLHUP | POLLERR) != 0 { return false }
            case EPIPE, ECONNRESET:
                if stoppingAtAnswer { return false }
                // Closed before it read the request: refused, most likely (another user).
                throw DaemonSocketError.closedEarly(path, beforeAnswer: true, .malformed("closed while the request was sent"))
            default:
                throw DaemonSocketError.failed(path, "closed the connection", errno)
            }
        }
        return true
    }

    /// The next bytes, or nil at the end of the stream. `timeout` bounds the wait for them.
    func read(timeout: Duration?) async throws -> Data? {
        while true {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count == 0 { return nil }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                _ = try await wait(for: Int16(POLLIN), timeout: timeout)
            case ECONNRESET:
                return nil
            default:
                throw DaemonSocketError.failed(path, "could not be read from", errno)
            }
        }
    }

    /// Whether the daemon has sent something or hung up: an idle keep-alive connection of which
    /// that is true was closed by the daemon (it stopped, or restarted) and must not be used.
    var hasInput: Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&request, 1, 0) != 0
    }

    /// Closes the socket (once).
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        closeDescriptor(descriptor)
    }

    private func wait(for events: Int16, timeout: Duration?) async throws -> Int16 {
        do {
            return try await SocketReactor.shared.wait(for: descriptor, events: events, timeout: timeout)
        } catch is SocketReactor.TimedOut {
            throw PrefsError(
                .unreachable, "prefsd at \(path) did not answer within \(timeout ?? .zero): it may be hung; restart it.")
        }
    }
}

/// `close(2)`, named apart from ``DaemonConnection/close()``.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
