import Foundation
import PrefsKit
import Synchronization

/// Who is on the other end of each Unix-socket connection: the program ``PeerCredentialsHandler``
/// found from `SO_PEERCRED` (`prefsctl[4242]`, from `/proc/PID/comm`), so that the changes a
/// connection's requests make record it. The user needs no asking: the socket admits only the
/// daemon's own.
final class ConnectionPeers: Sendable {
    private let programs = Mutex<[ObjectIdentifier: String]>([:])
    /// The daemon's user, whom every socket connection runs as.
    let user = ChangeAuthor.userName(uid: getuid())

    /// Records the program of `connection`, until it closes.
    func connected(_ connection: ObjectIdentifier, pid: Int32) {
        let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let program = "\(name.map { $0.isEmpty ? "pid" : $0 } ?? "pid")[\(pid)]"
        programs.withLock { $0[connection] = program }
    }

    /// Forgets a closed connection.
    func closed(_ connection: ObjectIdentifier) {
        _ = programs.withLock { $0.removeValue(forKey: connection) }
    }

    /// The author of a request on `connection` that says it is `userAgent`.
    func author(of connection: ObjectIdentifier?, userAgent: String?) -> ChangeAuthor {
        let program = connection.flatMap { connection in programs.withLock { $0[connection] } }
        let agent = switch (userAgent, program) {
        case (let userAgent?, let program?): "\(userAgent) (\(program))"
        case (let userAgent?, nil): userAgent
        case (nil, let program): program
        }
        return ChangeAuthor(name: user, agent: agent)
    }
}
