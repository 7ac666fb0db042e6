#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Hummingbird
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import Prometheus

/// The daemon's HTTP server: the `/v1` API of an engine (``API``) on a Unix socket, and
/// optionally on loopback TCP behind a bearer token.
///
/// Both listeners carry the same connection pipeline: the raw-bytes path
/// (``FrontAnswerHandler``) in front, Hummingbird behind it (``HummingbirdResponder``), and the
/// HTTP/1 rules between them (``HTTP1ConnectionHandler``) — Hummingbird's part and the handlers of
/// HTTP parts set up only once a connection needs them (``FrontFirstChannel``); the Unix socket
/// also checks its peer's uid. Build it, then run ``application`` (and ``tcpApplication``) as
/// services: they stop gracefully with their ServiceGroup. With a TCP listener, the Unix socket
/// starts listening once the TCP address is bound (``StartGate``), and not at all if it cannot be.
package struct PrefsHTTPServer: Sendable {
    /// The application on the Unix socket; run it inside a ServiceGroup, or on its own.
    package let application: FrontFirstApplication
    /// The same API on loopback TCP behind bearer tokens, when a ``TCPListener`` was given;
    /// run it beside ``application``.
    package let tcpApplication: FrontFirstApplication?

    /// Serves `engine` on the Unix socket at `socketPath`, accepting only connections from this
    /// process's user.
    ///
    /// The socket's folder is created 0700 if missing; a stale socket file left by a crashed
    /// daemon is removed, but a socket a live daemon answers on is refused with `conflict`.
    /// With `privateFolder` (the default socket's folder, which may sit in a shared `/tmp`), a
    /// folder that already exists must belong to this user — else `forbidden` — and is made 0700.
    ///
    /// With a `listener`, the API is also served on that loopback TCP address, where every
    /// request must carry a bearer token: the listener's file token, a named token's secret, or a
    /// console session's secret; the console (`/ui/`, made of `consoleFiles`, or of the files
    /// compiled in) is served there too.
    ///
    /// OFREP's endpoints read flags as `ofrep` says. Requests are counted with `metrics`, and
    /// `GET /v1/metrics` answers what its registry holds: give the engine the same factory
    /// (``PrefsMetrics``) for one scrape to show both.
    package init<Storage: PrefsStorage>(
        engine: PrefsEngine<Storage>, socketPath: String, privateFolder: Bool = false, listener: TCPListener? = nil,
        limits: ServerLimits = ServerLimits(), ofrep: OFREPSettings = OFREPSettings(), consoleFiles: ConsoleFiles? = nil,
        metrics: PrometheusMetricsFactory = PrefsMetrics.factory(),
        logger: Logger, onReady: @escaping @Sendable () async -> Void = {}
    ) throws {
        try SocketFolder.prepare(socketPath, privateFolder: privateFolder)
        let endings = WatchEndings()
        let occupancy = EventLoopOccupancy()
        let peers = ConnectionPeers()
        let console = Console(listener: listener, files: consoleFiles)
        let api = API(engine: engine, limits: limits, ofrep: ofrep, console: console, metrics: metrics, peers: peers, logger: logger)
        let methods = PlainMethods(api.endpoints)
        let uid = getuid()
        let applicationLogger = Self.applicationLogger(logger)
        let partHandlers: @Sendable () -> [any RemovableChannelHandler] = {
            [DisconnectHandler(endings: endings), QuiesceGraceHandler()]
        }
        // The socket waits for the TCP listener: a port taken stops the daemon before a client
        // reaches it, and it is ready once both listen.
        let tcpListening = listener.map { _ in StartGate() }
        application = Self.frontFirst(
            serving: api, endings: endings, address: .unixDomainSocket(path: socketPath),
            handlers: {
                [
                    ConnectionSetupHandler(api: api, methods: methods, occupancy: occupancy, maximumBodyBytes: limits.maximumPutBodyBytes),
                    PeerCredentialsHandler(allowedUID: uid, peers: peers, logger: logger),
                ]
            },
            partHandlers: partHandlers, logger: applicationLogger, startsAfter: tcpListening,
            onServerRunning: {
                chmod(socketPath, 0o600)
                await onReady()
            })
        tcpApplication = listener.map { listener in
            let api = api.listening(with: console.access)
            return Self.frontFirst(
                serving: api, endings: endings, address: .hostname(listener.host, port: listener.port),
                handlers: {
                    [ConnectionSetupHandler(api: api, methods: methods, occupancy: occupancy, maximumBodyBytes: limits.maximumPutBodyBytes)]
                },
                partHandlers: partHandlers, logger: applicationLogger, opens: tcpListening)
        }
    }

    /// An application serving `api` at `address`, whose connections start with `handlers` and
    /// have `partHandlers` behind Hummingbird's codec once they need it (``FrontFirstChannel``).
    /// It starts listening once `startsAfter` opens, if given, and opens `opens` once it listens
    /// (closing it when it stops, listening or not).
    private static func frontFirst(
        serving api: API, endings: WatchEndings, address: BindAddress,
        handlers: @escaping @Sendable () -> [any RemovableChannelHandler],
        partHandlers: @escaping @Sendable () -> [any RemovableChannelHandler],
        logger: Logger, startsAfter: StartGate? = nil, opens: StartGate? = nil,
        onServerRunning: (@Sendable () async -> Void)? = nil
    ) -> FrontFirstApplication {
        let connections = FrontFirstConnections()
        return FrontFirstApplication(
            application: Application(
                responder: HummingbirdResponder(api: api, endings: endings),
                server: .frontFirst(
                    configuration: .init(additionalChannelHandlers: handlers()), partHandlers: partHandlers,
                    connections: connections),
                configuration: .init(address: address, serverName: "prefsd"),
                onServerRunning: { _ in
                    opens?.open()
                    await onServerRunning?()
                },
                logger: logger
            ),
            connections: connections, startsAfter: startsAfter, closesWhenDone: opens)
    }

    /// The logger Hummingbird's applications log with: `logger`, but their own info lines
    /// ("Server started and listening…", "Shutting down") only when debugging — they would
    /// repeat the one line the daemon logs when ready and when stopped.
    static func applicationLogger(_ logger: Logger) -> Logger {
        var applicationLogger = logger
        if logger.logLevel == .info { applicationLogger.logLevel = .notice }
        return applicationLogger
    }
}
