import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: files it must not touch")
struct StoreFileSafetyTests {
    @Test("A file that is not SQLite is refused with a clear error, and its bytes are unchanged")
    func notSQLite() throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        var garbage = Data("this is not a database, just some notes\n".utf8)
        garbage.append(contentsOf: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try garbage.write(to: URL(fileURLWithPath: path))

        for _ in 0..<2 {  // The second attempt gets the same answer: the first did not leave the file claimed.
            let error = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, configuration: .forTests()) }
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("not a SQLite database") == true)
            #expect(error?.message.contains(path) == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("A file that starts like SQLite but is not a valid database is refused and unchanged")
    func corruptSQLite() throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        var bytes = Data("SQLite format 3\0".utf8)
        bytes.append(Data(repeating: 0xAB, count: 8192))
        try bytes.write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, configuration: .forTests()) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(path) == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test("A database with a migration this build does not know is refused and left untouched")
    func unknownMigration() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        do {
            let store = try EmbeddedStore(path: path, configuration: .forTests())
            try await store.set("k", to: 1)
            await store.close()
        }
        let known = try await sqlite3(path, "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        #expect(known.hasPrefix("0001_baseline"))
        try await sqlite3(path, "INSERT INTO grdb_migrations (identifier) VALUES ('9999_future')")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = #expect(throws: PrefsError.self) { try EmbeddedStore(path: path, configuration: .forTests()) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("9999_future") == true)
        #expect(error?.message.contains("newer prefsd") == true)

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try await sqlite3(path, "SELECT identifier FROM grdb_migrations ORDER BY identifier") == known + "\n9999_future")
        #expect(try await sqlite3(path, "SELECT key, scope, value FROM preference") == "k|/|1")
    }

    @Test("An empty file is a new database")
    func emptyFile() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { store in
            try await store.set("k", to: 1)
            #expect(try await store.resolve("k").value == 1)
        }
    }

    @Test("Missing folders are created")
    func createsFolders() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "a/b/c/prefs.sqlite").path
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { store in
            try await store.set("k", to: 1)
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }
}
