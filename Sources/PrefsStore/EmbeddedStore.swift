import Foundation
import PrefsEngine
import PrefsKit

/// The preferences store in this process: a SQLite database this process owns, under the
/// engine's in-memory cache, group-commit writer and watch hub.
///
/// ```swift
/// let store = try EmbeddedStore(path: "/tmp/prefs.sqlite")
/// try await store.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
/// let resolved = try await store.resolve("timeline.fontSize", scope: "/accounts/alice/threads/42")
/// resolved.source   // .scope("/accounts/alice")
/// ```
///
/// One store per database file: a second `EmbeddedStore` or `prefsd` on the same file fails at
/// once with `conflict`, naming the owner's pid. `prefsd` is this store behind an HTTP server.
public typealias EmbeddedStore = PrefsEngine<SQLiteStorage>

extension PrefsEngine where Storage == SQLiteStorage {
    /// Opens (creating and migrating if needed) the database at `path` and claims it.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - configuration: How the store behaves (durability, limits, overrides).
    /// - Throws: ``PrefsError`` — `conflict`, naming the owner's pid, if another process owns the
    ///   database; an error if the file is not a SQLite database, is corrupt, or comes from a
    ///   newer prefsd. In those cases the file is left untouched.
    public convenience init(path: String, configuration: StoreConfiguration = StoreConfiguration()) throws {
        try self.init(storage: SQLiteStorage(path: path, durability: configuration.durability), configuration: configuration)
    }

    /// A store on a new database in a temporary folder, removed when the store closes: for tests.
    ///
    /// - Parameter configuration: How the store behaves.
    /// - Returns: The open store.
    /// - Throws: ``PrefsError`` if the folder or the database cannot be made.
    public static func temporary(configuration: StoreConfiguration = StoreConfiguration()) throws -> EmbeddedStore {
        try temporary(configuration: configuration, wallClock: .system)
    }

    /// A store on a new database in a temporary folder, removed when the store closes, telling the
    /// time of day by `wallClock`: for tests that move it by hand.
    package static func temporary(configuration: StoreConfiguration, wallClock: WallClock) throws -> EmbeddedStore {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-\(UUID().uuidString)")
        do {
            let storage = try SQLiteStorage(
                path: folder.appending(path: "prefs.sqlite").path, durability: configuration.durability,
                temporaryDirectory: folder)
            do {
                return try EmbeddedStore(storage: storage, configuration: configuration, wallClock: wallClock)
            } catch {
                storage.close()
                throw error
            }
        } catch {
            // A store that could not open (a bad configuration) leaves no folder behind.
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// The database file.
    public var path: String { storage.location }
}
