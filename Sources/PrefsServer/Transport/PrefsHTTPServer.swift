#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import Prometheus

/// The daemon's HTTP server: the `/v1` API of an engine (``API``) on a Unix socket, and
/// optionally on TCP behind a bearer token (over TLS, given a ``TLSIdentity``).
///
/// Both listeners carry the same connection pipeline, and a request takes one of two paths to
/// the one endpoint table: the raw-bytes fast path (``FrontAnswerHandler``) for the plain requests
/// nearly every client sends, and behind it, once the fast path steps aside, the general HTTP/1
/// path — NIO's decoder and encoder, the HTTP/1 rules (``HTTP1ConnectionHandler``) and the API on
/// decoded requests (``DecodedAnswerHandler``), set up only once a connection needs them
/// (``ConnectionSetupHandler``); docs/http.md has the rules. The Unix socket also checks its
/// peer's uid. Build it, then run ``application`` (and ``tcpApplication``) as services: they stop
/// gracefully with their ServiceGroup. With a TCP listener, the Unix socket starts listening once
/// the TCP address is bound (``StartGate``), and not at all if it cannot be.
package struct PrefsHTTPServer: Sendable {
    /// The listener on the Unix socket; run it inside a ServiceGroup, or on its own.
    package let application: ConnectionListener
    /// The same API on loopback TCP behind bearer tokens, when a ``TCPListener`` was given;
    /// run it beside ``application``.
    package let tcpApplication: ConnectionListener?

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
        let occupancy = EventLoopOccupancy()
        let peers = ConnectionPeers()
        let console = Console(listener: listener, files: consoleFiles)
        let api = API(engine: engine, limits: limits, ofrep: ofrep, console: console, metrics: metrics, peers: peers, logger: logger)
        let methods = PlainMethods(api.endpoints)
        let uid = getuid()
        let maximumBodyBytes = limits.maximumPutBodyBytes
        // The socket waits for the TCP listener: a port taken stops the daemon before a client
        // reaches it, and it is ready once both listen.
        let tcpListening = listener.map { _ in StartGate() }
        application = ConnectionListener(
            address: .unixDomainSocket(path: socketPath),
            setUp: { channel in
                try channel.pipeline.syncOperations.addHandlers(
                    ConnectionSetupHandler(api: api, methods: methods, occupancy: occupancy, maximumBodyBytes: maximumBodyBytes),
                    PeerCredentialsHandler(allowedUID: uid, peers: peers, logger: logger))
            },
            startsAfter: tcpListening, opens: nil,
            onListening: {
                chmod(socketPath, 0o600)
                await onReady()
            })
        tcpApplication = listener.map { listener in
            let api = api.listening(with: console.access)
            return ConnectionListener(
                address: .hostname(listener.host, port: listener.port),
                setUp: { channel in
                    // TLS first, when served: every byte behind it is plain HTTP.
                    if let tls = listener.tls { try channel.pipeline.syncOperations.addHandler(tls.handler()) }
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionSetupHandler(api: api, methods: methods, occupancy: occupancy, maximumBodyBytes: maximumBodyBytes))
                },
                startsAfter: nil, opens: tcpListening, onListening: {})
        }
    }
}
