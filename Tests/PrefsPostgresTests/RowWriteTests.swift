@testable import PrefsPostgres
import PrefsKit
import Testing

/// A pending row's last write: stored or deleted, explicitly — not an optional of an optional.
@Suite("PostgreSQL writer: a row's last write")
struct RowWriteTests {
    @Test("A row stored then deleted is deleted, a row deleted then stored is stored: only the last write counts")
    func theLastWriteCounts() throws {
        var pending = PendingWrites()
        pending.setValue(key: "a", scope: .root, value: 1, revision: 1)
        pending.deleteValue(key: "a", scope: .root)
        pending.deleteLock(key: "b", scope: .root)
        pending.setLock(key: "b", scope: .root, revision: 2)
        let a = try #require(pending.values[PendingWrites.Row(key: "a", scope: "/")])
        let b = try #require(pending.locks[PendingWrites.Row(key: "b", scope: "/")])
        #expect(a.isDelete)
        #expect(a.stored == nil)
        #expect(!b.isDelete)
        #expect(b.stored == 2)
    }
}
