#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Hummingbird
import Logging
import PrefsClientCore
import PrefsKit

/// The daemon's HTTP server: the `/v1` API over a ``PrefsService`` on a Unix socket.
///
/// Build it, then run ``application`` as a service (it stops gracefully with its ServiceGroup).
public struct PrefsHTTPServer: Sendable {
    /// The Hummingbird application; run it with `runService()` or inside a ServiceGroup.
    public let application: Application<RouterResponder<PrefsRequestContext>>
    /// The same API on loopback TCP behind a bearer token, when a ``TCPListener`` was given;
    /// run it beside ``application``.
    public let tcpApplication: Application<RouterResponder<PrefsRequestContext>>?

    /// Serves `service` on the Unix socket at `socketPath`, accepting only connections from
    /// this process's user.
    ///
    /// The socket's folder is created 0700 if missing; a stale socket file left by a crashed
    /// daemon is removed, but a socket a live daemon answers on is refused with `conflict`.
    /// With `privateFolder` (the default socket's folder, which may sit in a shared `/tmp`), a
    /// folder that already exists must belong to this user — else `forbidden` — and is made 0700.
    ///
    /// With a `listener`, the API is also served on that loopback TCP address, where every
    /// request must carry its bearer token.
    public init(
        service: any PrefsService, socketPath: String, privateFolder: Bool = false, listener: TCPListener? = nil,
        limits: ServerLimits = ServerLimits(), logger: Logger, onReady: @escaping @Sendable () async -> Void = {}
    ) throws {
        try Self.prepareSocketPath(socketPath, privateFolder: privateFolder)
        let endings = WatchEndings()
        let router = Self.router(service: service, limits: limits, endings: endings)
        let uid = getuid()
        let answering = EventLoopAnswering(service: service, limits: limits, logger: logger)
        let applicationLogger = Self.applicationLogger(logger)
        application = Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        ConnectionSetupHandler(answering: answering), PeerCredentialsHandler(allowedUID: uid, logger: logger),
                    ]
                        + EventLoopAnswerHandler.handlers(answering: answering, endings: endings)
                        + [QuiesceGraceHandler()])),
            configuration: .init(address: .unixDomainSocket(path: socketPath), serverName: "prefsd"),
            onServerRunning: { _ in
                chmod(socketPath, 0o600)
                await onReady()
            },
            logger: applicationLogger
        )
        tcpApplication = listener.map { listener in
            Application(
                router: Self.router(service: service, limits: limits, token: listener.token, endings: endings),
                server: .http1(
                    configuration: .init(
                        additionalChannelHandlers: [
                            ConnectionSetupHandler(answering: nil), DisconnectHandler(endings: endings), QuiesceGraceHandler(),
                        ])),
                configuration: .init(address: .hostname(listener.host, port: listener.port), serverName: "prefsd"),
                logger: applicationLogger
            )
        }
    }

    /// The logger Hummingbird's applications log with: `logger`, but their own info lines
    /// ("Server started and listening…", "Shutting down") only when debugging — they would
    /// repeat the one line the daemon logs when ready and when stopped.
    static func applicationLogger(_ logger: Logger) -> Logger {
        var applicationLogger = logger
        if logger.logLevel == .info { applicationLogger.logLevel = .notice }
        return applicationLogger
    }

    /// The router with every `/v1` route and the JSON error middleware; with a `token`, every
    /// request must carry it as a bearer token. Watch streams register with `endings`, to end
    /// when their connection closes.
    static func router(service: any PrefsService, limits: ServerLimits, token: [UInt8]? = nil, endings: WatchEndings)
        -> Router<PrefsRequestContext>
    {
        let router = Router(context: PrefsRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        if let token { router.add(middleware: BearerTokenMiddleware(token: token)) }
        PreferenceRoutes(service: service, limits: limits).register(on: router)
        DraftRoutes(service: service, limits: limits).register(on: router)
        WatchRoute(service: service, endings: endings).register(on: router)
        return router
    }

    /// Creates the socket's folder (0700), checks a private one is this user's, and clears a
    /// stale socket file.
    static func prepareSocketPath(_ path: String, privateFolder: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if folder.isEmpty {
            // A bare file name: the socket goes in the working folder, which exists.
        } else if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } else if privateFolder {
            let attributes: [FileAttributeKey: Any]
            do {
                attributes = try FileManager.default.attributesOfItem(atPath: folder)
            } catch {
                throw PrefsError(.unavailable, "Cannot inspect the socket folder \(folder): \(error.localizedDescription)")
            }
            let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
            guard owner == getuid() else {
                throw PrefsError(
                    .forbidden,
                    "The socket folder \(folder) belongs to uid \(owner.map(String.init) ?? "?"), not to you (uid \(getuid())); another user may be waiting on it. Remove it, or give prefsd another --socket."
                )
            }
            if let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue, permissions & 0o077 != 0 {
                chmod(folder, 0o700)
            }
        }
        guard FileManager.default.fileExists(atPath: path) else { return }
        if UnixSocketProbe.isAnswering(path) {
            throw PrefsError(
                .conflict,
                "Another prefsd is already listening on \(path). Stop it, or give this one another --socket.")
        }
        // Nothing answers: a socket file left by a daemon that crashed.
        unlink(path)
    }
}

/// Whether something accepts connections on a Unix socket.
enum UnixSocketProbe {
    static func isAnswering(_ path: String) -> Bool {
        guard let descriptor = try? UnixSocket.descriptor(connectedTo: path) else { return false }
        close(descriptor)
        return true
    }
}
