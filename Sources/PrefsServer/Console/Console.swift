import PrefsKit

/// The console as the API serves it (``ConsoleEndpoints``): its files, its sessions, and the TCP
/// listener it is served on — whose address its links point at, and whose tokens sign in.
struct Console: Sendable {
    /// The files of a folder served instead of those compiled in (`prefsd --console-dir`).
    private let folderFiles: ConsoleFiles?
    /// The sign-in codes and sessions.
    let sessions: ConsoleSessions
    /// `http://HOST:PORT` of the TCP listener (`https://` when it serves TLS); nil without one
    /// (the console cannot be reached).
    let origin: String?
    /// How the TCP listener checks a token.
    let access: ListenerAccess

    /// The console of the daemon listening on `listener` (none: only the Unix socket), made of
    /// `files`, or of those compiled in.
    init(listener: TCPListener?, files: ConsoleFiles? = nil) {
        folderFiles = files
        sessions = ConsoleSessions()
        origin = listener.map { listener in
            let host = listener.host.contains(":") ? "[\(listener.host)]" : listener.host
            return "\(listener.tls == nil ? "http" : "https")://\(host):\(listener.port)"
        }
        access = .bearer(fileToken: listener?.token.map(BearerToken.init(bytes:)), sessions: sessions)
    }

    /// The files served at `/ui/`. Those compiled in are made ready on the first request for one:
    /// a daemon nobody opens the console of keeps none of them in memory.
    var files: ConsoleFiles { folderFiles ?? .compiled }
}
