import NIOCore
import NIOPosix
import ServiceLifecycle

/// One of the server's listeners — the Unix socket or the TCP address — as a service: it binds,
/// sets up each connection it accepts with its handlers (the raw-bytes path first,
/// ``ConnectionSetupHandler``), and stops with its ServiceGroup, or on its own.
///
/// Stopped gracefully, it stops accepting and asks each connection to finish, returning once all
/// have closed; cancelled, it closes the client's side of each (``ListenerConnections``). It
/// waits at ``startsAfter`` before it binds, if given, and opens ``opens`` once it listens
/// (closing it when it stops, listening or not).
package struct ConnectionListener: Service {
    /// Where a listener binds.
    enum Address: Sendable {
        case unixDomainSocket(path: String)
        case hostname(String, port: Int)
    }

    let address: Address
    /// Adds a new connection's handlers.
    let setUp: @Sendable (any Channel) throws -> Void
    /// The gate to wait at before binding, if any: the listener does not start if the gate closes
    /// instead of opening, and waits for its group to stop it.
    let startsAfter: StartGate?
    /// The gate to open once listening, and close once stopped, if any: one waiting at it is
    /// never left waiting.
    let opens: StartGate?
    /// Run once listening.
    let onListening: @Sendable () async -> Void

    /// Listens until stopped; throws the error of a bind that failed (`EADDRINUSE`: an `IOError`).
    package func run() async throws {
        defer { opens?.close() }
        if let startsAfter, try await !startsAfter.wait() {
            // The listener it waited for stopped without listening, and its error is ending the
            // group. Returning now would race that error to the group as a service that ended by
            // itself (`serviceFinishedUnexpectedly`, instead of the reason): this waits for the
            // group to stop it instead.
            try await gracefulShutdown()
            return
        }
        let connections = ListenerConnections()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [setUp] channel in
                channel.eventLoop.makeCompletedFuture {
                    try connections.opened(channel)
                    try setUp(channel)
                }
            }
        let server: any Channel =
            switch address {
            case .unixDomainSocket(let path):
                try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            case .hostname(let host, let port):
                try await bootstrap.bind(host: host, port: port).get()
            }
        opens?.open()
        await onListening()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await server.closeFuture.get()
            } onGracefulShutdown: {
                server.close(promise: nil)
            }
            // Stopped gracefully (the listening socket is closed), or cancelled (below).
            await connections.finish(closing: Task.isCancelled)
        } onCancel: {
            server.close(promise: nil)
        }
    }
}
