import PrefsKit

/// The console as the API serves it (``ConsoleEndpoints``): its files, its sessions, and the TCP
/// listener it is served on — whose address its links point at, and whose tokens sign in.
struct Console: Sendable {
    /// The files served at `/ui/`.
    let files: ConsoleFiles
    /// The sign-in codes and sessions.
    let sessions: ConsoleSessions
    /// `http://HOST:PORT` of the TCP listener; nil without one (the console cannot be reached).
    let origin: String?
    /// How the TCP listener checks a token.
    let access: ListenerAccess

    /// The console of the daemon listening on `listener` (none: only the Unix socket), made of `files`.
    init(listener: TCPListener?, files: ConsoleFiles = .compiled) {
        self.files = files
        sessions = ConsoleSessions()
        origin = listener.map { listener in
            let host = listener.host.contains(":") ? "[\(listener.host)]" : listener.host
            return "http://\(host):\(listener.port)"
        }
        access = .bearer(fileToken: listener?.token.map(BearerToken.init(bytes:)), sessions: sessions)
    }
}
