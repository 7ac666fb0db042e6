#if canImport(Glibc)
import PrefsEngine
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import Foundation
import Logging
import NIOCore
import Metrics
import PrefsKit
import PrefsPostgres
import PrefsServer
import PrefsStore
import PrefsSync
import Prometheus
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `prefsd`: owns a preferences database and serves it on a Unix socket.
@main
struct PrefsDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefsd",
        abstract: "Keeps an application's preferences in SQLite and serves them on a Unix socket.",
        discussion: """
            The database defaults to $XDG_STATE_HOME/prefsd/prefs.sqlite and the socket to \
            $XDG_RUNTIME_DIR/prefsd/prefsd.sock. Query it with prefsctl. SIGTERM or SIGINT stops it \
            gracefully.
            """,
        version: prefsVersion
    )

    @Option(help: "The database file (created with its folders if missing).")
    var db: String?

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL database to share with other prefsd hosts instead of a SQLite file: postgresql://USER@HOST:PORT/DB[?sslmode=disable|prefer|require]. The password comes from the URL, PGPASSWORD or --postgres-password-file.",
            valueName: "url"))
    var postgres: String?

    @Option(help: ArgumentHelp("A file holding the PostgreSQL password: yours, readable by you only (0600).", valueName: "file"))
    var postgresPasswordFile: String?

    @Option(help: "The Unix socket to listen on.")
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "Also serve the API on loopback TCP, e.g. 127.0.0.1:7878, to bearer tokens: --token-file's, or named ones (prefsctl token create).",
            valueName: "host:port"))
    var listen: String?

    @Option(
        help: ArgumentHelp(
            "A bearer token TCP clients may send as an admin at / (named 'default'): a file only you can read (0600).",
            valueName: "file"))
    var tokenFile: String?

    @Flag(help: "Let --listen bind an address other machines can reach without TLS.")
    var allowNonLoopback = false

    @Option(
        help: ArgumentHelp(
            "Serve --listen over TLS with this certificate (PEM: the server's, then its chain); with --tls-key. An address other machines can reach needs no --allow-non-loopback then.",
            valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "Be a device of the prefsd at this URL (http:// or https://, its --listen): sync this SQLite store with it, as the named token of --upstream-token-file.",
            valueName: "url"))
    var upstream: String?

    @Option(
        help: ArgumentHelp(
            "A file holding the secret of the upstream's named token this device syncs as (prefsctl token create NAME on the upstream): yours, readable by you only (0600).",
            valueName: "file"))
    var upstreamTokenFile: String?

    @Option(
        help: ArgumentHelp(
            "Verify an https:// upstream's certificate against the CA certificates (PEM) of this file instead of the system's.",
            valueName: "file"))
    var upstreamCa: String?

    @Option(
        help: ArgumentHelp(
            "Serve the console (/ui/ on --listen) from this folder's files instead of those compiled in: for working on the console (Console/ of the source tree).",
            valueName: "folder"))
    var consoleDir: String?

    @Option(name: .customLong("schema"), help: ArgumentHelp("A JSON file of key → schema to register at start (repeatable).", valueName: "file"))
    var schemaFiles: [String] = []

    @Option(name: .customLong("override"), help: ArgumentHelp("A volatile value that wins over everything: KEY=JSON (repeatable).", valueName: "key=json"))
    var overrides: [String] = []

    @Flag(help: "Refuse keys that have no schema.")
    var strict = false

    @Flag(help: "Record no author or reason with changes: history and the audit log show them as unknown.")
    var noAuthors = false

    @Option(help: "full: sync every commit (survives power loss); normal: sync at checkpoints (survives a crash of prefsd).")
    var durability: StoreConfiguration.Durability = .full

    @Option(help: "How many changes the change log keeps at least, for resuming watches (it drops the older ones in steps of 1/32 of this).")
    var retainChanges = 100_000

    @Option(
        help: ArgumentHelp(
            "How long the change log keeps every change at least, whatever their number: how far back history and the audit log reach (e.g. 90d; default: only --retain-changes).",
            valueName: "span"))
    var retainFor: String?

    @Option(
        help: ArgumentHelp(
            "Seconds the outcome of a write sent with an Idempotency-Key is kept for its repeats (default 24 hours).",
            valueName: "seconds"))
    var idempotencyRetention = 86_400.0

    @Option(help: "The largest preference value accepted, in bytes of JSON.")
    var maxValueBytes = 64 * 1024

    @Option(help: "The largest attachment accepted, in bytes (default 100 MiB).")
    var maxAttachmentBytes: Int64 = 100 * 1024 * 1024

    @Option(help: "How many watches may be open at once; one more is refused with 429.")
    var maxWatches = 50_000

    @Option(help: "The most operations one batch may hold.")
    var maxBatchOperations = 10_000

    @Option(help: "How many undelivered events a watcher may fall behind before its watch ends with `overflow`.")
    var watchBuffer = 10_000

    @Option(help: "Seconds between progress events on quiet watch streams.")
    var progressInterval = 15.0

    @Option(
        help: ArgumentHelp(
            "How OFREP's evaluation contexts become scopes: segments and {attributes}, e.g. /tenants/{tenant}/users/{targetingKey}; {scope}, last, takes the context's scope as a path.",
            valueName: "template"))
    var ofrepScope = "{scope}"

    @Option(help: ArgumentHelp("The keys an OFREP bulk evaluation answers: those starting with this (default: every key).", valueName: "prefix"))
    var ofrepPrefix: String?

    @Option(
        help: ArgumentHelp(
            "How many threads serve connections (default: one fewer than the machine's cores, at least one — the core left over commits writes).",
            valueName: "n"))
    var eventLoops: Int?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    mutating func validate() throws {
        guard retainChanges >= 1 else { throw ValidationError("--retain-changes must be at least 1.") }
        if let retainFor, DurationText.seconds(retainFor) == nil {
            throw ValidationError("--retain-for takes a span such as 3600s, 90m, 12h, 90d or 2w, not '\(retainFor)'.")
        }
        guard maxValueBytes >= 16 else { throw ValidationError("--max-value-bytes must be at least 16.") }
        do {
            _ = try ScopeTemplate(ofrepScope)
        } catch let error as PrefsError {
            throw ValidationError("--ofrep-scope: \(error.message)")
        }
        guard maxAttachmentBytes >= 1 else { throw ValidationError("--max-attachment-bytes must be at least 1.") }
        guard maxWatches >= 1 else { throw ValidationError("--max-watches must be at least 1.") }
        guard maxBatchOperations >= 1 else { throw ValidationError("--max-batch-operations must be at least 1.") }
        guard watchBuffer >= 2 else { throw ValidationError("--watch-buffer must be at least 2.") }
        guard progressInterval > 0 else { throw ValidationError("--progress-interval must be above 0.") }
        guard eventLoops.map({ $0 >= 1 }) ?? true else { throw ValidationError("--event-loops must be at least 1.") }
        guard idempotencyRetention >= 1 else { throw ValidationError("--idempotency-retention must be at least 1 second.") }
        guard db == nil || postgres == nil else {
            throw ValidationError("--db and --postgres exclude each other: one database, SQLite or PostgreSQL.")
        }
        guard postgresPasswordFile == nil || postgres != nil else {
            throw ValidationError("--postgres-password-file goes with --postgres.")
        }
        guard listen != nil || tokenFile == nil else {
            throw ValidationError("--token-file goes with --listen: it is the token TCP clients present.")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: the certificate and its private key.")
        }
        guard listen != nil || tlsCert == nil else {
            throw ValidationError("--tls-cert and --tls-key go with --listen: they serve its TCP listener over TLS.")
        }
        guard (upstream == nil) == (upstreamTokenFile == nil) else {
            throw ValidationError(
                "--upstream and --upstream-token-file go together: the upstream's URL, and the file holding the named token this device syncs as.")
        }
        guard upstreamCa == nil || upstream != nil else {
            throw ValidationError("--upstream-ca goes with --upstream: it verifies the upstream's certificate.")
        }
        if let upstream {
            guard postgres == nil else {
                throw ValidationError("--upstream and --postgres exclude each other: a device is a SQLite store.")
            }
            let scheme = upstream.prefix { $0 != ":" }.lowercased()
            guard ["http", "https"].contains(scheme), upstream.contains("://") else {
                throw ValidationError("--upstream takes the upstream's URL, http://HOST:PORT or https://HOST:PORT, not '\(upstream)'.")
            }
            guard upstreamCa == nil || scheme == "https" else {
                throw ValidationError("--upstream-ca verifies an https:// upstream's certificate; \(upstream) is plain http.")
            }
        }
    }

    func run() async throws {
        // Before anything touches NIO's shared event loops, which the listeners and PostgreSQL's
        // connections run on. The group-commit writer has a thread of its own, busy with every
        // batch: on a small machine, a loop per core would leave it competing with them for every
        // core (two cores: 7% more CPU per write and 16% more per GET than one loop).
        NIOSingletons.groupLoopCountSuggestion = eventLoops ?? max(1, System.coreCount - 1)
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "prefsd")
        // One registry for the process: the engine's and the server's metrics, and any library's
        // that uses the process's MetricsSystem, all answered by GET /v1/metrics.
        let metrics = PrefsMetrics.factory()
        MetricsSystem.bootstrap(metrics)
        // Everything prefsd creates (database, socket) is for its user only.
        umask(0o077)

        // Before any database opens: nothing reads SQLite's counts of its memory.
        if !SQLiteProcessSettings.turnOffMemoryStatistics() {
            logger.warning("SQLite was initialized before prefsd could turn its memory statistics off")
        }
        let paths = DefaultPaths(environment: ProcessInfo.processInfo.environment, uid: getuid())
        let socketPath = socket ?? paths.socket
        var transport: HTTPUpstream?
        do {
            let listener = try tcpListener()
            var configuration = try storeConfiguration()
            configuration.metricsFactory = metrics
            transport = try upstreamTransport()
            configuration.upstream = transport?.url
            if let postgres {
                let store = try await PostgresStore(
                    url: postgres, passwordFile: postgresPasswordFile, configuration: configuration, logger: logger)
                try await serve(
                    store, socketPath: socketPath, privateFolder: socket == nil, listener: listener, upstream: nil, metrics: metrics,
                    logger: logger)
            } else {
                let databasePath = URL(fileURLWithPath: db ?? paths.database).standardizedFileURL.path
                let store = try EmbeddedStore(path: databasePath, configuration: configuration)
                try await serve(
                    store, socketPath: socketPath, privateFolder: socket == nil, listener: listener, upstream: transport,
                    metrics: metrics, logger: logger)
            }
            // The engine has closed: nothing exchanges through the upstream's client any more.
            await transport?.shutdown()
        } catch let error as PrefsError {
            await transport?.shutdown()
            logger.error("prefsd cannot start: \(error.message)")
            throw ExitCode.failure
        } catch {
            await transport?.shutdown()
            throw error
        }
    }

    /// Registers the schema files, then serves `store` until SIGTERM or SIGINT, and closes it.
    private func serve<Storage: PrefsStorage>(
        _ store: PrefsEngine<Storage>, socketPath: String, privateFolder: Bool, listener: TCPListener?, upstream: HTTPUpstream?,
        metrics: PrometheusMetricsFactory, logger: Logger
    ) async throws {
        for file in schemaFiles {
            try await store.register(schemas: try SchemaFile.read(file))
        }
        // A device: its pusher and puller run until the engine closes.
        if let upstream {
            store.startSync(through: upstream)
            logger.info("prefsd syncs with its upstream \(upstream.url)")
        }
        let server = try PrefsHTTPServer(
            engine: store, socketPath: socketPath, privateFolder: privateFolder, listener: listener,
            limits: ServerLimits(maximumValueBytes: maxValueBytes),
            ofrep: OFREPSettings(scopeTemplate: try ScopeTemplate(ofrepScope), prefix: ofrepPrefix),
            consoleFiles: try consoleDir.map(ConsoleFiles.init(folder:)), metrics: metrics, logger: logger,
            onReady: {
                StartupPages.release()
                // Counted once serving: counting walks every key, which need not delay it.
                let status = try? await store.status()
                logger.info(
                    "prefsd \(prefsVersion) ready on \(socketPath): database \(store.storage.location), revision \(status?.revision ?? 0), \(status?.counts.values ?? 0) values, pid \(getpid())"
                )
            }
        )
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: server.application)]
        if let tcp = server.tcpApplication { services.append(.init(service: tcp)) }
        // Shut down first (services stop in reverse order): see ShutdownStarter.
        let starter = ShutdownStarter(socketPath: socketPath, endWatches: store.endWatches)
        services.append(.init(service: starter))
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A connection that will not finish — a client gone silent mid-upload — does not hold
        // the stop for ever: past this, each listener closes the client's side of every
        // connection still open, which ends its request (an answer under way still finishes).
        configuration.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: configuration)
        do {
            try await group.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            // Only the TCP listener can be taken: a socket answered by another daemon is refused
            // before (PrefsHTTPServer), and a stale one replaced.
            await store.close()
            throw PrefsError(
                .unavailable,
                "Cannot listen on \(listen ?? "the TCP address"): the address is already in use, by another prefsd or another "
                    + "program. Stop it, or give --listen another port.")
        }
        await store.close()
        starter.removeSocket()
        logger.info("prefsd stopped")
    }

    /// The TCP listener of `--listen`, with the token read from `--token-file` if given — a file
    /// that must be this user's and closed to others, like an SSH key — served over TLS with
    /// `--tls-cert` and `--tls-key` if given.
    private func tcpListener() throws -> TCPListener? {
        guard let listen else { return nil }
        let tls = try tlsCert.map { try TLSIdentity(certificateFile: $0, keyFile: tlsKey ?? "") }
        let token = try tokenFile.map { try Self.readSecret($0, what: "token file") }
        return try TCPListener(address: listen, token: token, allowNonLoopback: allowNonLoopback, tls: tls)
    }

    /// The transport to `--upstream`, as the named token of `--upstream-token-file`; nil without
    /// an upstream.
    private func upstreamTransport() throws -> HTTPUpstream? {
        guard let upstream, let upstreamTokenFile else { return nil }
        let token = try Self.readSecret(upstreamTokenFile, what: "upstream token file")
        guard !token.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw PrefsError(
                .invalidRequest,
                "The upstream token file \(upstreamTokenFile) is empty: put the secret of the upstream's named token in it (prefsctl token create NAME --role writer --scope S, on the upstream)."
            )
        }
        return try HTTPUpstream(url: upstream, token: token, caFile: upstreamCa)
    }

    /// The text of a file holding a secret (`what` names it in errors): it must be this user's
    /// and closed to others, like an SSH key.
    private static func readSecret(_ path: String, what: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw PrefsError(.invalidRequest, "Cannot read the \(what) \(path): \(String(cString: strerror(errno))).")
        }
        guard info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw PrefsError(.forbidden, "The \(what) \(path) must be yours and readable by you only: chmod 600 \(path).")
        }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw PrefsError(.invalidRequest, "Cannot read the \(what) \(path) as text: \(error.localizedDescription)")
        }
    }

    private func storeConfiguration() throws -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = durability
        configuration.rules = PreferenceWriteRules(
            maximumValueBytes: maxValueBytes, strict: strict, maximumBatchOperations: maxBatchOperations)
        configuration.maximumWatches = maxWatches
        configuration.retainChanges = retainChanges
        configuration.recordsAuthors = !noAuthors
        configuration.retainFor = retainFor.flatMap(DurationText.seconds).map { .milliseconds(Int64($0 * 1000)) }
        configuration.idempotencyRetention = .milliseconds(Int64(idempotencyRetention * 1000))
        configuration.watchBufferLimit = watchBuffer
        configuration.maximumAttachmentBytes = maxAttachmentBytes
        configuration.progressInterval = .milliseconds(Int(progressInterval * 1000))
        for assignment in overrides {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw PrefsError(.invalidRequest, "--override takes KEY=JSON, not '\(assignment)'.")
            }
            let key = String(assignment[..<equals])
            configuration.overrides[key] = JSONValue(commandLine: String(assignment[assignment.index(after: equals)...]))
        }
        return configuration
    }
}

/// What the daemon does first when it starts to stop, before the servers drain: removes the
/// socket's name, so that a client connecting from now on — a watcher reconnecting the moment
/// its stream ends, above all — is told at once that no daemon is there; ends the watch streams,
/// so the servers' graceful drain does not wait on them; then gives a connection accepted just
/// before a moment to reach the server. (A connection NIO accepts while the server stops
/// accepting is never handed to it, and NIO traps when it is dropped: apple/swift-nio#2637.)
final class ShutdownStarter: Service {
    /// How long a connection accepted just before shutdown has to reach the server.
    static let acceptedConnectionGrace: Duration = .milliseconds(100)

    let socketPath: String
    let endWatches: @Sendable () -> Void
    private let socketRemoved = Atomic(false)

    init(socketPath: String, endWatches: @escaping @Sendable () -> Void) {
        self.socketPath = socketPath
        self.endWatches = endWatches
    }

    func run() async throws {
        try? await gracefulShutdown()
        removeSocket()
        endWatches()
        try? await Task.sleep(for: Self.acceptedConnectionGrace)
    }

    /// Removes the socket's name, once: a daemon started on the same path after it must keep its own.
    func removeSocket() {
        guard !socketRemoved.exchange(true, ordering: .relaxed) else { return }
        unlink(socketPath)
    }
}

extension StoreConfiguration.Durability: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
