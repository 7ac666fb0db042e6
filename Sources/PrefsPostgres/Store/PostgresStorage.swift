import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import PrefsEngine
import PrefsKit
import Synchronization

/// A PostgreSQL database that any number of hosts share: the storage under ``PostgresStore``
/// and a `prefsd` started with `--postgres URL`.
///
/// Revisions are one gap-free counter for every host, fixed under the lock of a one-row counter
/// as each transaction commits, so their order is commit order; each host's group commit puts
/// all the requests waiting on it in one transaction, and hosts' transactions run side by side
/// until they commit (``PostgresWriteConnection``). Each commit notifies the other
/// hosts (``CommitListener``), which read the change log after their newest revision — on a
/// notification, when they start listening, and on a periodic tick — so a change reaches every
/// host, once and in order, whatever was lost on the way. A host's own commits take in the others'
/// changes too, so while its writer commits steadily it does not listen (``WriterActivity``).
///
/// Writes wait for the database on a thread of their own (``PostgresWriter``); reads of drafts,
/// tokens and the change log go through a pool of connections, made anew if it stops handing
/// them out (``ReadingPool``), and an attachment's download through a connection of its own.
///
/// An application names the type (`PostgresStore` is `PrefsEngine<PostgresStorage>`) but never
/// holds one: its members are the engine's alone.
public final class PostgresStorage: PrefsStorage {
    /// Where the database is.
    package let database: PostgresLocation
    /// This host's name in the notifications it sends, unique per storage.
    let hostID = UUID().uuidString
    let connectionConfiguration: PostgresConnection.Configuration
    let logger: Logger
    private let readers: ReadingPool
    private let writer: PostgresWriter
    private let writerActivity = WriterActivity()
    private let tick: Duration
    private let steadyWriter: Duration
    private let listener = Mutex<CommitListener?>(nil)
    private let closed = Atomic<Bool>(false)

    /// Connects to `database`, migrates it (once, whichever host starts first), and readies the
    /// connections. `tick` is how often the host reads the change log even without a
    /// notification; `steadyWriter`, how recently the host's writer must have committed for it to
    /// count as committing steadily — then the host stops listening for notifications, and it
    /// listens again once the writer has not committed for that long (``CommitListener``).
    /// `clock` is the engine's (`PrefsEngine(storage:snapshot:configuration:clock:)`): it
    /// measures the writer's waits for a commit whose connection was lost. Throws `unavailable`,
    /// with what went wrong, when PostgreSQL cannot be reached.
    package init(
        database: PostgresLocation, tick: Duration = .seconds(1), steadyWriter: Duration = .milliseconds(5),
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "prefsd")
    ) async throws {
        self.database = database
        self.tick = tick
        self.steadyWriter = steadyWriter
        self.logger = logger
        let tls = try Self.tls(for: database.tls)
        var configuration = PostgresConnection.Configuration(
            host: database.host, port: database.port, username: database.username, password: database.password,
            database: database.database, tls: tls.connection)
        configuration.options.connectTimeout = .seconds(5)
        connectionConfiguration = configuration
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            defer { Task { try? await connection.close() } }
            // A start that PostgreSQL's going away would otherwise hold for good.
            try await ClosedConnectionWatch.run(on: connection) { [database, logger] in
                try await PostgresMigrator.migrate(connection, location: database, logger: logger)
            }
        } catch {
            throw PostgresErrors.translate(error, location: database)
        }
        var clientConfiguration = PostgresClient.Configuration(
            host: database.host, port: database.port, username: database.username, password: database.password,
            database: database.database, tls: tls.client)
        clientConfiguration.options.maximumConnections = 16
        clientConfiguration.options.connectTimeout = .seconds(5)
        clientConfiguration.options.additionalStartupParameters = [("application_name", "prefsd reader")]
        readers = ReadingPool(configuration: clientConfiguration, location: database, logger: logger)
        writer = PostgresWriter(
            connection: PostgresWriteConnection(
                location: database, configuration: configuration.named("prefsd writer"), clock: clock, hostID: hostID,
                activity: writerActivity, logger: logger))
    }

    /// The driver's TLS settings for a `sslmode`.
    private static func tls(for mode: PostgresLocation.TLSMode) throws
        -> (connection: PostgresConnection.Configuration.TLS, client: PostgresClient.Configuration.TLS)
    {
        switch mode {
        case .disable:
            return (.disable, .disable)
        case .prefer:
            let tls = TLSConfiguration.makeClientConfiguration()
            return (.prefer(try NIOSSLContext(configuration: tls)), .prefer(tls))
        case .require:
            let tls = TLSConfiguration.makeClientConfiguration()
            return (.require(try NIOSSLContext(configuration: tls)), .require(tls))
        }
    }

    package var location: String { database.description }

    /// Any number of hosts share the database.
    package var hasOtherWriters: Bool { true }

    package var commitsOnCallingThread: Bool { false }

    /// Uploads are staged in a folder of this host's own under the system's temporary folder.
    package var stagingFolder: URL {
        FileManager.default.temporaryDirectory.appending(path: "prefsd-uploads-\(hostID)")
    }

    package func loadSnapshot() throws -> StorageSnapshot {
        try writer.sync { connection in try connection.loadSnapshot() }
    }

    /// ``loadSnapshot()``, waited for without holding a thread of the concurrency pool through
    /// its round trips to PostgreSQL.
    func loadSnapshotOffThePool() async throws -> StorageSnapshot {
        try await writer.perform { connection in try connection.loadSnapshot() }
    }

    package func withWriter<T>(_ body: (any WriteConnection) throws -> T) rethrows -> T {
        try writer.sync { connection in try body(connection) }
    }

    package func asyncWithWriter(_ body: @escaping @Sendable (any WriteConnection) -> Void) {
        writer.async(body)
    }

    package func observeCommitsElsewhere(_ wake: @escaping @Sendable (_ announced: Revision?) -> Void) {
        let started = CommitListener(
            configuration: connectionConfiguration.named("prefsd listener"), hostID: hostID, tick: tick,
            writerActivity: writerActivity, steadyWriter: steadyWriter, logger: logger, wake: wake)
        listener.withLock { $0 = started }
    }

    package func changeLog(after revision: Revision, through: Revision, limit: Int) async throws -> ChangeLogPage {
        try await reading { connection, logger in
            try PostgresRows.changePage(
                try await connection.query(PostgresRows.changePageQuery(after: revision, through: through, limit: limit), logger: logger)
                    .collect())
        }
    }

    package func changeLog(matching filter: ChangeLogFilter, limit: Int) async throws -> ChangeLogPage {
        try await reading { connection, logger in
            try PostgresRows.changePage(
                try await connection.query(PostgresRows.changeLogQuery(filter, limit: limit), logger: logger).collect(), whole: true)
        }
    }

    package func keyedRevisions(after revision: Revision, through: Revision, limit: Int) async throws -> [KeyedRevision] {
        try await reading { connection, logger in
            var found: [KeyedRevision] = []
            let query: PostgresQuery = """
                SELECT key, revision, kind = 'schema' FROM change
                WHERE revision > \(revision) AND revision <= \(through) AND key IS NOT NULL ORDER BY revision LIMIT \(Int64(limit))
                """
            for try await (key, revision, isSchema) in try await connection.query(query, logger: logger)
                .decode((String, Int64, Bool).self)
            {
                found.append(KeyedRevision(key: key, revision: revision, isSchema: isSchema))
            }
            return found
        }
    }

    package func newestCompactedAway(matching filter: ChangeLogFilter) async throws -> Revision {
        try await reading { connection, logger in
            var newest: Revision = 0
            for try await value in try await connection.query(PostgresRows.newestCompactedAwayQuery(filter), logger: logger)
                .decode(Int64.self)
            {
                newest = value
            }
            return newest
        }
    }

    package func conflicts(_ query: ConflictQuery) async throws -> [SyncConflict] {
        try await reading { connection, logger in
            var conflicts: [SyncConflict] = []
            for try await row in try await connection.query(SyncRows.conflictsQuery(query), logger: logger) {
                conflicts.append(try SyncRows.conflict(row))
            }
            return conflicts
        }
    }

    package func tokens() async throws -> [StoredToken] {
        try await reading { connection, logger in
            var tokens: [StoredToken] = []
            for try await row in try await connection.query(TokenRows.all, logger: logger) { tokens.append(try TokenRows.token(row)) }
            return tokens
        }
    }

    package func recordTokenUse(_ lastUsed: [String: Double]) async throws {
        try await reading { connection, logger in _ = try await connection.query(TokenRows.recordUse(lastUsed), logger: logger).collect() }
    }

    package func newestRevision() async throws -> Revision {
        try await reading { connection, logger in
            var newest: Revision = 0
            for try await value in try await connection.query(
                "SELECT newest_revision FROM change_log_state WHERE id = 1", logger: logger
            ).decode(Int64.self) {
                newest = value
            }
            return newest
        }
    }

    package func draft(_ id: UUID) async throws -> Draft? {
        try await drafts(PostgresRows.draftQuery(id)).first
    }

    package func drafts(account: String?, thread: String?) async throws -> [Draft] {
        try await drafts(PostgresRows.draftsQuery(account: account, thread: thread))
    }

    package func draftVersions(of id: UUID, from: Int64, through: Int64) async throws -> [DraftVersion] {
        try await reading { connection, logger in
            var versions: [DraftVersion] = []
            for try await row in try await connection.query(DraftSyncRows.draftVersions(of: id, from: from, through: through), logger: logger) {
                versions.append(try DraftSyncRows.draftVersion(row))
            }
            return versions
        }
    }

    private func drafts(_ query: PostgresQuery) async throws -> [Draft] {
        try await reading { connection, logger in
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            let ids = try PostgresRows.draftIDs(rows)
            var attachments: [PostgresRow] = []
            if !ids.isEmpty {
                for try await row in try await connection.query(PostgresRows.attachmentsQuery(of: ids), logger: logger) {
                    attachments.append(row)
                }
            }
            return try PostgresRows.drafts(rows, attachments: attachments)
        }
    }

    package func openBlob(_ sha256: String) async throws -> (any BlobReading)? {
        try await translatingErrors {
            try await PostgresBlobReader.open(
                sha256: sha256, configuration: connectionConfiguration.named("prefsd download"), logger: logger)
        }
    }

    package func blobSize(sha256: String) async throws -> Int64? {
        try await reading { connection, logger in
            var size: Int64?
            for try await value in try await connection.query(BlobUploadRows.blobSize(sha256: sha256), logger: logger).decode(Int64.self) {
                size = value
            }
            return size
        }
    }

    package func blobUsers(sha256: String) async throws -> BlobUsers {
        try await reading { connection, logger in
            var users = BlobUsers()
            for try await account in try await connection.query(BlobUploadRows.accounts(using: sha256), logger: logger).decode(String.self) {
                users.accounts.insert(account)
            }
            for try await uploader in try await connection.query(BlobUploadRows.uploaders(of: sha256), logger: logger).decode(String.self) {
                users.uploaders.insert(uploader)
            }
            return users
        }
    }

    package func blobUpload(sha256: String, uploader: String) async throws -> BlobUpload? {
        try await reading { connection, logger in
            var upload: BlobUpload?
            for try await row in try await connection.query(BlobUploadRows.upload(sha256: sha256, uploader: uploader), logger: logger) {
                upload = try BlobUploadRows.upload(row)
            }
            return upload
        }
    }

    /// Runs `read` on a connection of the pool, its errors translated.
    private func reading<T: Sendable>(_ read: @escaping @Sendable (PostgresConnection, Logger) async throws -> T) async throws -> T {
        try await translatingErrors { [readers, logger] in try await readers.withConnection { try await read($0, logger) } }
    }

    /// Runs `read`, its errors translated.
    private func translatingErrors<T>(_ read: () async throws -> T) async throws -> T {
        do {
            return try await read()
        } catch {
            throw PostgresErrors.translate(error, location: database, work: .reading)
        }
    }

    /// Stops listening, closes the writer's connection once queued writes have run, and the pool.
    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        listener.withLock { $0?.stop() }
        writer.close()
        readers.close()
        try? FileManager.default.removeItem(at: stagingFolder)
    }
}

extension PostgresConnection.Configuration {
    /// The same configuration, for a connection that names itself `name` to the server
    /// (`application_name`, as `pg_stat_activity` shows it).
    func named(_ name: String) -> Self {
        var configuration = self
        configuration.options.additionalStartupParameters = [("application_name", name)]
        return configuration
    }
}
