import GRDB
import PrefsEngine
@testable import PrefsStore
import Testing

/// The outcomes of idempotent requests as the writer stores and finds them: a batch's keys are
/// looked up in statements of up to `keysPerLookUp` keys each, and every stored field comes back.
@Suite("Store: idempotent requests' outcomes")
struct IdempotentRequestRecordsTests {
    @Test func findsEveryStoredOutcomeOfABatchLargerThanOneLookUp() throws {
        let queue = try DatabaseQueue()
        try StoreDatabase.migrator.migrate(queue)
        let count = IdempotentRequestRecords.keysPerLookUp * 2 + 3
        let stored = (0..<count).map { (index: Int) -> StoredOutcome in
            let body = "{\"revision\":\(index)}"
            let createdAt = 1_000 + Double(index) / 4
            return StoredOutcome(
                key: "key-\(index)", fingerprint: "print-\(index)", refused: index % 3 == 0, body: body,
                baseRevision: Int64(index) * 10, createdAt: createdAt)
        }
        try queue.write { db in
            for outcome in stored { try IdempotentRequestRecords.insert(db, outcome) }
            let asked = stored.map(\.key) + (0..<count).map { "unknown-\($0)" }
            let found = try IdempotentRequestRecords.fetch(db, keys: asked.shuffled())
            #expect(found.count == count)
            for outcome in stored { #expect(found[outcome.key] == outcome) }
            #expect(try IdempotentRequestRecords.fetch(db, keys: ["unknown"]).isEmpty)
            #expect(try IdempotentRequestRecords.fetch(db, keys: []).isEmpty)
        }
    }
}
