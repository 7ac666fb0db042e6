import Foundation
import PrefsEngine
import PrefsKit
import PrefsPostgres
import PrefsStore
import TestHarness
import Testing

/// The key index on the real storages: rebuilt from SQLite's and PostgreSQL's change log when a
/// store opens, it finds a key's changes wherever they are — by revision, through each dialect's
/// SQL — and, after compaction, the change kept because it set what is stored now.
@Suite struct KeyIndexTests {
    /// Keeps 32 changes, so that the writes below compact the log.
    private static let keeping32 = {
        var configuration = StoreConfiguration()
        configuration.retainChanges = 32
        return configuration
    }()

    /// Writes `rare` once at `/accounts/alice` with its schema, then 60 changes of other keys,
    /// then `rare` again at `/`: the first two are compacted away but for what set what is
    /// stored now.
    private static func write(_ store: some PrefsService) async throws {
        try await store.register(schemas: ["rare": PreferenceSchema(type: .int, defaultValue: 0)])
        try await store.set("rare", to: 1, scope: "/accounts/alice", reason: "long ago")
        for index in 0..<60 { try await store.set("busy.k\(index % 5)", to: .integer(Int64(index))) }
        try await store.set("rare", to: 2, reason: "lately")
    }

    /// What the history of `rare` at alice's scope, read once the index is built, must be.
    private static func expectHistory(_ store: some PrefsService & Sendable, indexed: () async -> Bool) async throws {
        #expect(await indexed(), "the key index is rebuilt from the log")
        let history = try await store.history(of: "rare", scope: "/accounts/alice")
        // The write at / is under alice's own value: her value is still the one set long ago.
        #expect(history.steps.map(\.change.reason) == ["long ago"])
        #expect(history.current.value == 1)
        // At /: the late write, then the schema's default — kept by compaction, as what is
        // stored now.
        let atRoot = try await store.history(of: "rare", scope: .root)
        #expect(atRoot.steps.map(\.change.kind) == [.set, .schema])
        #expect(atRoot.steps.map(\.value) == [2, 0])
        #expect(atRoot.oldestRevision > 2, "the log was compacted past the first writes")
    }

    @Test func onSQLiteAcrossAReopening() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-keyindex-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        try await withStore(EmbeddedStore(path: path, configuration: Self.keeping32)) { store in
            try await Self.write(store)
            try await Self.expectHistory(store) { await store.keyIndexRebuilt() }
        }
        // Rebuilt from the file's log.
        try await withStore(EmbeddedStore(path: path, configuration: Self.keeping32)) { store in
            try await Self.expectHistory(store) { await store.keyIndexRebuilt() }
        }
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func onPostgreSQLAcrossAReopening() async throws {
        try await withPostgresDatabase { database in
            try await withStore(PostgresStore(url: database.url, configuration: Self.keeping32)) { store in
                try await Self.write(store)
                try await Self.expectHistory(store) { await store.keyIndexRebuilt() }
            }
            try await withStore(PostgresStore(url: database.url, configuration: Self.keeping32)) { store in
                try await Self.expectHistory(store) { await store.keyIndexRebuilt() }
            }
        }
    }
}
