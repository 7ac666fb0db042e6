#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import Logging

/// Closes a Unix-socket connection whose peer runs as another user (checked with `SO_PEERCRED`
/// as the connection is set up), so only the daemon's own user can talk to it even if the
/// socket's permissions are loosened, and records the peer's program in ``ConnectionPeers``.
/// Having asked, it leaves the pipeline: an open connection does not keep it.
final class PeerCredentialsHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = Never

    private let allowedUID: uid_t
    private let peers: ConnectionPeers
    private let logger: Logger

    init(allowedUID: uid_t, peers: ConnectionPeers, logger: Logger) {
        self.allowedUID = allowedUID
        self.peers = peers
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        defer { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
        #if os(Linux)
        guard let provider = context.channel as? any SocketOptionProvider,
            context.channel.localAddress?.protocol == .unix
        else { return }
        let channel = context.channel
        let (allowedUID, peers, logger) = (allowedUID, peers, logger)
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(PeerCredentials.option))
        credentials.whenComplete { result in
            switch result {
            case .success(let peer) where peer.uid == allowedUID:
                let connection = ObjectIdentifier(channel)
                peers.connected(connection, pid: peer.pid)
                channel.closeFuture.whenComplete { _ in peers.closed(connection) }
                return
            case .success(let peer):
                logger.warning("Refused a connection from uid \(peer.uid) (pid \(peer.pid)): prefsd serves uid \(allowedUID) only")
            case .failure(let error):
                logger.warning("Refused a connection whose peer could not be identified: \(error)")
            }
            channel.close(promise: nil)
        }
        #endif
    }
}

/// Linux's `struct ucred`, which the Glibc module does not export: what `SO_PEERCRED` returns.
struct PeerCredentials: Sendable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    /// `SO_PEERCRED` (asm-generic/socket.h).
    static let option: Int32 = 17
}
