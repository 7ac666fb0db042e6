import Foundation
import Logging
import PrefsEngine
import PrefsKit

/// The preferences store of a server app's instance, on a PostgreSQL database that any number of
/// instances (or `prefsd` hosts) share: the same ``PrefsService`` as `EmbeddedStore`, embedded
/// in each instance with no daemon.
///
/// ```swift
/// let store = try await PostgresStore(url: "postgresql://prefs@db.internal/prefs?sslmode=require")
/// try await store.set("feature.newTimeline", to: true, scope: "/tenants/acme")
/// for try await event in store.watch(WatchRequest(keys: ["feature.newTimeline"], scope: "/tenants/acme")) { … }
/// ```
///
/// Every instance sees its own writes at once and another's within milliseconds (or exactly
/// when it asks, with a minimum revision); revisions are the same on every instance.
public typealias PostgresStore = PrefsEngine<PostgresStorage>

extension PrefsEngine where Storage == PostgresStorage {
    /// Connects to the database at `url` (`postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]`),
    /// migrates it if needed, and loads what the engine keeps in memory.
    ///
    /// The password comes from the URL, `PGPASSWORD`, or `passwordFile` (0600).
    ///
    /// - Parameters:
    ///   - url: The database's URL.
    ///   - passwordFile: A file whose first line is the password (mode 0600), or nil.
    ///   - configuration: How the store behaves.
    ///   - logger: Where the store logs.
    /// - Throws: ``PrefsError`` — `unavailable` when PostgreSQL cannot be reached,
    ///   `invalid_request` for a bad URL, or as ``PostgresLocation/init(url:environment:passwordFile:)``
    ///   does.
    public convenience init(
        url: String, passwordFile: String? = nil, configuration: StoreConfiguration = StoreConfiguration(),
        logger: Logger = Logger(label: "prefsd")
    ) async throws {
        let location = try PostgresLocation(url: url, passwordFile: passwordFile)
        try await self.init(database: location, configuration: configuration, logger: logger)
    }

    /// Connects to `database`, migrates it if needed, and loads what the engine keeps in memory.
    ///
    /// - Parameters:
    ///   - database: Where the database is and how to reach it.
    ///   - configuration: How the store behaves.
    ///   - logger: Where the store logs.
    /// - Throws: ``PrefsError`` — `unavailable` when PostgreSQL cannot be reached.
    public convenience init(
        database: PostgresLocation, configuration: StoreConfiguration = StoreConfiguration(),
        logger: Logger = Logger(label: "prefsd")
    ) async throws {
        try await self.init(database: database, configuration: configuration, logger: logger, clock: ContinuousClock())
    }

    /// Connects to `database`, migrates it if needed, and loads what the engine keeps in memory,
    /// with `clock` measuring the engine's waits and its storage's alike.
    ///
    /// - Parameters:
    ///   - database: Where the database is and how to reach it.
    ///   - configuration: How the store behaves.
    ///   - logger: Where the store logs.
    ///   - clock: What measures the engine's and the storage's waits; tests pass one they move by hand.
    ///   - wallClock: What tells the time of day (changes' times, retention); tests pass one they move by hand.
    /// - Throws: ``PrefsError`` — `unavailable` when PostgreSQL cannot be reached.
    package convenience init(
        database: PostgresLocation, configuration: StoreConfiguration, logger: Logger, clock: any Clock<Duration>,
        wallClock: WallClock = .system
    ) async throws {
        let storage = try await PostgresStorage(database: database, clock: clock, logger: logger)
        do {
            try self.init(
                storage: storage, snapshot: try await storage.loadSnapshotOffThePool(), configuration: configuration, clock: clock,
                wallClock: wallClock)
        } catch {
            storage.close()
            throw error
        }
    }
}
