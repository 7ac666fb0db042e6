import Foundation
import GRDB
import PrefsEngine
import PrefsKit
@testable import PrefsStore
import TestHarness
import Testing

@Suite("Store: durability")
struct StoreDurabilityTests {
    /// GRDB's `DatabasePool` sets `synchronous = NORMAL` when it switches to WAL, after the
    /// configuration's `prepareDatabase` has run: a setting made there is silently lost.
    @Test(
        "The writer's synchronous is what the durability asks for: FULL syncs each commit, NORMAL only checkpoints",
        arguments: [(StoreConfiguration.Durability.full, 2), (.normal, 1)])
    func writerSynchronous(durability: StoreConfiguration.Durability, expected: Int) async throws {
        try await withStore(makeStore { $0.durability = durability }) { store in
            try await store.set("k", to: 1)
            let storage = try #require(store.storage as? SQLiteStorage)
            let synchronous = try await storage.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
            #expect(synchronous == expected)
        }
    }

    @Test("A pool opened by hand gets the same setting, and the setting is checked")
    func poolByHand() throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let pool = try DatabasePool(path: folder.appending(path: "raw.sqlite").path)
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 1)  // what GRDB left
        try pool.setSynchronous(for: .full)
        #expect(try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
    }
}
