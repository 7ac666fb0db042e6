import Foundation
import PrefsKit
import Synchronization

/// Who is on the other end of each Unix-socket connection: the program ``PeerCredentialsHandler``
/// found from `SO_PEERCRED` (`prefsctl[4242]`, from `/proc/PID/comm`), so that the changes a
/// connection's requests make record it. The user needs no asking: the socket admits only the
/// daemon's own.
final class ConnectionPeers: Sendable {
    /// A connection's program, and the agent its last request's `User-Agent` made with it: a
    /// client sends the same one with every request, so it is put together once.
    private struct Peer {
        var program: String
        var userAgent: String?
        var agent: String
    }

    private let peers = Mutex<[ObjectIdentifier: Peer]>([:])
    /// The daemon's user, whom every socket connection runs as.
    let user = ChangeAuthor.userName(uid: getuid())

    /// Records the program of `connection`, until it closes.
    func connected(_ connection: ObjectIdentifier, pid: Int32) {
        let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let program = "\(name.map { $0.isEmpty ? "pid" : $0 } ?? "pid")[\(pid)]"
        peers.withLock { $0[connection] = Peer(program: program, userAgent: nil, agent: program) }
    }

    /// Forgets a closed connection.
    func closed(_ connection: ObjectIdentifier) {
        _ = peers.withLock { $0.removeValue(forKey: connection) }
    }

    /// The author of a request on `connection` that says it is `userAgent`.
    func author(of connection: ObjectIdentifier?, userAgent: String?) -> ChangeAuthor {
        guard let connection else { return ChangeAuthor(name: user, agent: userAgent) }
        let agent = peers.withLock { peers -> String? in
            guard var peer = peers[connection] else { return userAgent }
            if peer.userAgent != userAgent {
                peer.userAgent = userAgent
                peer.agent = userAgent.map { "\($0) (\(peer.program))" } ?? peer.program
                peers[connection] = peer
            }
            return peer.agent
        }
        return ChangeAuthor(name: user, agent: agent)
    }
}
