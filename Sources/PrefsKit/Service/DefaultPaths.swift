/// Where prefsd keeps its database and socket unless told otherwise (README):
/// `$XDG_STATE_HOME/prefsd/prefs.sqlite` and `$XDG_RUNTIME_DIR/prefsd/prefsd.sock`.
///
/// Computed from an environment dictionary (pass `ProcessInfo.processInfo.environment`), so the
/// rules are testable without touching the real environment.
package struct DefaultPaths: Sendable, Hashable {
    /// The database file.
    package var database: String
    /// The Unix socket the daemon listens on and clients connect to.
    package var socket: String

    /// The paths for `environment` and the user `uid`.
    ///
    /// Without `XDG_STATE_HOME`: `$HOME/.local/state`. Without `XDG_RUNTIME_DIR`: `/tmp/prefsd-UID`
    /// (a directory only that user owns, created 0700 by the daemon). `PREFSD_SOCKET` and
    /// `PREFSD_DB` override both.
    package init(environment: [String: String], uid: UInt32) {
        let home = environment["HOME"] ?? "/tmp"
        let stateHome = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/state"
        database = environment["PREFSD_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? stateHome + "/prefsd/prefs.sqlite"
        if let socket = environment["PREFSD_SOCKET"], !socket.isEmpty {
            self.socket = socket
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            self.socket = runtime + "/prefsd/prefsd.sock"
        } else {
            self.socket = "/tmp/prefsd-\(uid)/prefsd.sock"
        }
    }
}
