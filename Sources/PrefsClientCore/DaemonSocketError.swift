#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import PrefsKit

/// The errors of a connection to the daemon's socket, blocking or not: each an `unreachable`
/// ``PrefsKit/PrefsError`` that names the socket and says what to do.
enum DaemonSocketError {
    /// No connection could be made (`code` is the `errno` of the call that failed).
    static func unreachable(_ path: String, _ code: Int32) -> PrefsError {
        if code == ENAMETOOLONG {
            return PrefsError(.unreachable, "The socket path \(path) is too long for a Unix socket (over 107 bytes).")
        }
        let reason: String
        switch code {
        case ENOENT: reason = "there is no socket there"
        case ECONNREFUSED: reason = "nothing accepts connections on it (a stale socket file?)"
        case EACCES, EPERM: reason = "permission denied"
        case EAGAIN: reason = "it accepts no more connections for now"
        default: reason = String(cString: strerror(code))
        }
        return PrefsError(
            .unreachable,
            "Cannot reach prefsd at \(path): \(reason). Start the daemon with `prefsd` "
                + "(or `prefsd --socket \(path)`), or point --socket / PREFSD_SOCKET at the socket it listens on."
        )
    }

    /// An answer cut short: before any answer, most likely the daemon refused us (it serves only
    /// its own user); midway, the daemon went away.
    static func closedEarly(_ path: String, beforeAnswer: Bool, _ error: HTTPParseError) -> PrefsError {
        if beforeAnswer {
            return PrefsError(
                .unreachable,
                "prefsd at \(path) closed the connection without answering. It accepts connections only from the user "
                    + "it runs as: run this as that user (or the daemon may have stopped)."
            )
        }
        return PrefsError(.unreachable, "prefsd at \(path) stopped answering midway: \(error)")
    }

    /// A socket call failed: the connection to `path` `what` (e.g. "could not be read from").
    static func failed(_ path: String, _ what: String, _ code: Int32) -> PrefsError {
        PrefsError(.unreachable, "The connection to prefsd at \(path) \(what): \(String(cString: strerror(code))).")
    }
}
