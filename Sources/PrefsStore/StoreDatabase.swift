import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// Opens the SQLite database a store owns: checks it, migrates it, configures it.
///
/// A file that is not SQLite, is corrupt, or was written by a newer prefsd is refused before
/// anything writes to it: those checks run on a read-only connection.
enum StoreDatabase {
    /// The migrations this build applies, from `Migrations/sqlite/*.sql`, compiled in.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (identifier, sql) in EmbeddedMigrations.sqlite {
            migrator.registerMigration(identifier) { db in try db.execute(sql: sql) }
        }
        return migrator
    }

    /// Opens (creating if needed, with its folder) and migrates the database at `path`; each of its
    /// commits reports the WAL's length to `walFrames`.
    static func open(path: String, durability: StoreConfiguration.Durability, walFrames: WALFrameCount) throws -> DatabasePool {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 {
            try checkExisting(path: path)
        }
        // Refused before SQLite opens it, which would already touch the files beside it.
        for file in [path, url.deletingLastPathComponent().path] where access(file, F_OK) == 0 && access(file, W_OK) != 0 {
            throw PrefsError(
                .unavailable,
                "Cannot open \(path) for writing (\(file) is read-only: \(String(cString: strerror(errno)))); prefsd did not change it. Make it writable by you, or choose another --db."
            )
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        configuration.label = "prefsd"
        configuration.prepareDatabase { db in
            // The writer checkpoints after answering, not inside commits (GroupCommitWriter):
            // SQLite's own checkpoints are off, and each commit reports the WAL's length instead.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            walFrames.observe(db)
        }
        let pool = try translatingErrors(path: path) { try DatabasePool(path: path, configuration: configuration) }
        try translatingErrors(path: path) {
            try pool.setSynchronous(for: durability)
            try migrator.migrate(pool)
        }
        return pool
    }

    /// Refuses, without writing to it, a file that is not a SQLite database, fails its integrity
    /// check, or holds migrations this build does not know.
    private static func checkExisting(path: String) throws {
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16) ?? Data()
        guard header == Data("SQLite format 3\0".utf8) else {
            throw PrefsError(
                .unavailable,
                "\(path) is not a SQLite database; prefsd did not touch it. Move it away or choose another --db."
            )
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        // Opened immutable, SQLite reads the file and creates nothing beside it (no -wal, no
        // -shm). Unless a WAL is left from a crash: then its commits count, and a read-only
        // open (which may refresh the -shm index, never the data) is needed to see them.
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        let probePath = wal > 0 ? path : "file:" + Self.uriEscaped(path) + "?immutable=1"
        try translatingErrors(path: path) {
            let probe = try DatabaseQueue(path: probePath, configuration: configuration)
            defer { try? probe.close() }
            try probe.read { db in
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw PrefsError(
                        .unavailable,
                        "\(path) is corrupt (\(check.prefix(3).joined(separator: "; "))); prefsd did not touch it. "
                            + "Restore it from a dump or a backup, or choose another --db."
                    )
                }
                let known = Set(EmbeddedMigrations.sqlite.map(\.name))
                let unknown = try migrator.appliedIdentifiers(db).subtracting(known)
                guard unknown.isEmpty else {
                    throw PrefsError(
                        .unavailable,
                        "\(path) was written by a newer prefsd (it has migrations \(unknown.sorted().joined(separator: ", ")) "
                            + "that this build does not know); prefsd did not touch it. Upgrade prefsd."
                    )
                }
            }
        }
    }

    /// `path` as the path of a `file:` URI.
    private static func uriEscaped(_ path: String) -> String {
        path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "?", with: "%3f")
            .replacingOccurrences(of: "#", with: "%23")
    }

    /// Runs `body`, turning SQLite errors into ``PrefsError``s that name the file and say what
    /// to do.
    private static func translatingErrors<T>(path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PrefsError {
            throw error
        } catch let error as DatabaseError {
            let detail = error.message ?? "\(error)"
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                throw PrefsError(
                    .unavailable,
                    "\(path) is corrupt (\(detail)); prefsd did not touch it. Restore it from a dump or a backup, or choose another --db."
                )
            case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
                throw PrefsError(
                    .unavailable,
                    "Cannot open \(path) for writing (\(detail)); prefsd did not change it. Make it and its folder writable by you, or choose another --db."
                )
            default:
                throw PrefsError(.unavailable, "Cannot open the database \(path): \(detail).")
            }
        }
    }
}
