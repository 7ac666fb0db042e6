import Foundation
import GRDB
import PrefsEngine
import PrefsKit
@testable import PrefsStore
import Testing

/// What compacting the log dropped, in a SQLite file: for each key, scope and kind among the rows
/// dropped, the newest revision dropped with its stamp and time (`compacted_entry`), written in the
/// compaction's transaction and read back through a filter's conditions and by `lastChange`.
@Suite("Store: what compaction dropped")
struct CompactedEntryTests {
    typealias Rows = SyncStorageTests

    /// Revisions 1 to 10: keys `a` and `b` at scopes, a schema, a draft's row and a conflict. What
    /// is stored now: `a` at / (6) and at /accounts/alice (8), a lock on `b` at /accounts/bob (7).
    static let changes = [
        Rows.change(1, .set, key: "a", scope: "/", value: 1),
        Rows.change(2, .set, key: "a", scope: "/accounts/alice", value: 2),
        Rows.change(3, .set, key: "b", scope: "/accounts/bob", value: 3),
        Rows.change(4, .schema, key: "a", scope: nil, value: ["type": "integer"]),
        Rows.change(5, .draftCreated, key: nil, scope: nil, draft: "d1"),
        Rows.change(6, .set, key: "a", scope: "/", value: 6),
        Rows.change(7, .lock, key: "b", scope: "/accounts/bob"),
        Rows.change(8, .set, key: "a", scope: "/accounts/alice", value: 8),
        Rows.change(9, .conflict, key: "a", scope: "/accounts/alice", value: ["revision": 9]),
        Rows.change(10, .set, key: "b", scope: "/", value: 10),
    ]

    @Test("Compaction records the newest revision it drops of each key, scope and kind, keeping the highest; filters select them")
    func marks() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let database = folder.appending(path: "prefs.sqlite").path
        try await Rows.withStorage(folder) { storage in
            try Rows.transaction(storage) { connection in
                for change in Self.changes { try connection.appendChange(change) }
                try connection.upsertValue(key: "a", scope: .root, value: 6, revision: 6)
                try connection.insertLock(key: "b", scope: "/accounts/bob", revision: 7)
                try connection.upsertValue(key: "a", scope: "/accounts/alice", value: 8, revision: 8)
            }
            func logged(_ filter: ChangeLogFilter) async throws -> [Revision] {
                try await storage.changeLog(matching: filter, limit: 100).changes.map(\.event.revision)
            }
            #expect(try await logged(ChangeLogFilter(reach: "/accounts/alice")) == [1, 2, 4, 6, 8, 9, 10], "no draft's row")
            #expect(try await storage.newestCompactedAway(matching: ChangeLogFilter()) == 0, "nothing dropped yet")

            try Rows.transaction(storage) { try $0.compactChangeLog(keepingFrom: 9, newestRevision: 10) }
            #expect(try await logged(ChangeLogFilter()) == [6, 7, 8, 9, 10], "the rows that set what is stored now kept")
            #expect(
                try await sqlite3(database, "SELECT key, scope, kind, revision FROM compacted_entry ORDER BY key, scope, kind")
                    == "a||schema|4\na|/|set|1\na|/accounts/alice|set|2\nb|/accounts/bob|set|3",
                "no row for the draft's")
            func newest(_ filter: ChangeLogFilter) async throws -> Revision {
                try await storage.newestCompactedAway(matching: filter)
            }
            #expect(try await newest(ChangeLogFilter()) == 4)
            #expect(try await newest(ChangeLogFilter(key: "a")) == 4)
            #expect(try await newest(ChangeLogFilter(key: "b")) == 3)
            #expect(try await newest(ChangeLogFilter(key: "c")) == 0)
            #expect(try await newest(ChangeLogFilter(prefix: "b")) == 3)
            #expect(try await newest(ChangeLogFilter(kinds: [.schema])) == 4)
            #expect(try await newest(ChangeLogFilter(subtree: .root)) == 3, "not the schema's")
            #expect(try await newest(ChangeLogFilter(subtree: "/accounts/alice")) == 2)
            #expect(try await newest(ChangeLogFilter(subtree: "/accounts/al")) == 0, "a subtree is whole scopes")
            #expect(try await newest(ChangeLogFilter(reach: "/accounts/bob")) == 4, "a schema is within every reach")
            #expect(try await newest(ChangeLogFilter(reach: "/accounts/bob", kinds: [.set])) == 3)
            #expect(try await newest(ChangeLogFilter(reach: "/accounts/carol", kinds: [.set])) == 1, "/ is above it")
            #expect(try await newest(ChangeLogFilter(key: "a", scopes: ["/accounts/alice", "/"])) == 4)
            #expect(try await newest(ChangeLogFilter(key: "a", scopes: ["/accounts/alice", "/"], kinds: [.set])) == 2)
            #expect(try await newest(ChangeLogFilter(key: "b", scopes: ["/accounts/carol", "/"])) == 0)

            // `a` set again at /: its row 6 no longer sets what is stored, and goes with the next
            // compaction, in the same transaction.
            try Rows.transaction(storage) { connection in
                try connection.upsertValue(key: "a", scope: .root, value: 11, revision: 11)
                try connection.appendChange(Rows.change(11, .set, key: "a", scope: "/", value: 11))
                try connection.compactChangeLog(keepingFrom: 11, newestRevision: 11)
            }
            #expect(try await logged(ChangeLogFilter()) == [7, 8, 11])
            #expect(
                try await sqlite3(database, "SELECT key, scope, kind, revision FROM compacted_entry ORDER BY key, scope, kind")
                    == "a||schema|4\na|/|set|6\na|/accounts/alice|conflict|9\na|/accounts/alice|set|2\nb|/|set|10\nb|/accounts/bob|set|3")
            #expect(try await newest(ChangeLogFilter(reach: "/accounts/carol", kinds: [.set])) == 10)
            #expect(try await newest(ChangeLogFilter(key: "a", subtree: "/accounts")) == 9)
        }
        try await Rows.withStorage(folder) { storage in
            let newest = try await storage.newestCompactedAway(matching: ChangeLogFilter(key: "b"))
            #expect(newest == 10, "after the store is opened again")
        }
    }

    /// Revisions 1 to 6 of `k`: at /a a set and a reset by the phone, a set made here, a reset by
    /// the laptop (all dropped by a compaction from 7); at /b a set by the phone, stored now (kept).
    /// `other` at /a is stored too.
    static let entryChanges = [
        Rows.change(1, .set, scope: "/a", value: 1, stamp: Rows.phone),
        Rows.change(2, .reset, scope: "/a", stamp: Rows.phone),
        Rows.change(3, .set, scope: "/a", value: 3),
        Rows.change(4, .reset, scope: "/a", stamp: Rows.laptop),
        Rows.change(5, .set, scope: "/b", value: 5, stamp: Rows.phone),
        Rows.change(6, .set, key: "other", scope: "/a", value: 6),
    ]

    @Test("lastChange falls back to the newest set or reset compaction dropped, with its stamp and time; the log's rows come first")
    func lastChangeOfACompactedEntry() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let database = folder.appending(path: "prefs.sqlite").path
        try await Rows.withStorage(folder) { storage in
            try Rows.transaction(storage) { connection in
                for change in Self.entryChanges { try connection.appendChange(change) }
                try connection.upsertValue(key: "k", scope: "/b", value: 5, revision: 5)
                try connection.upsertValue(key: "other", scope: "/a", value: 6, revision: 6)
                try connection.compactChangeLog(keepingFrom: 7, newestRevision: 6)
            }
            #expect(
                try await sqlite3(database, "SELECT key, scope, kind, revision, stamp, time FROM compacted_entry ORDER BY kind")
                    == "k|/a|reset|4|\(Rows.laptop)|1800000004.0\nk|/a|set|3||1800000003.0",
                "the newest dropped row's stamp and time, of each kind")
            try Rows.transaction(storage) { connection in
                #expect(
                    try connection.lastChange(of: "k", at: "/a", after: 0)
                        == LoggedChange(compacted: .reset, key: "k", scope: "/a", revision: 4, time: 1_800_000_004, stamp: Rows.laptop))
                #expect(try connection.lastChange(of: "k", at: "/a", after: 3)?.event.revision == 4)
                #expect(try connection.lastChange(of: "k", at: "/a", after: 4) == nil, "nothing after it")
                #expect(try connection.lastChange(of: "k", at: "/", after: 0) == nil)
                #expect(try connection.lastChange(of: "k", at: "/b", after: 0) == Self.entryChanges[4], "the log's row, whole")
                try connection.upsertValue(key: "k", scope: "/a", value: 7, revision: 7)
                try connection.appendChange(Rows.change(7, .set, scope: "/a", value: 7, stamp: Rows.phone))
                #expect(
                    try connection.lastChange(of: "k", at: "/a", after: 0) == Rows.change(7, .set, scope: "/a", value: 7, stamp: Rows.phone))
            }
            // A reset made here, dropped by the next compaction: newer, it replaces the laptop's.
            try Rows.transaction(storage) { connection in
                try connection.deleteValue(key: "k", scope: "/a")
                try connection.appendChange(Rows.change(8, .reset, scope: "/a"))
                try connection.compactChangeLog(keepingFrom: 9, newestRevision: 8)
            }
            #expect(
                try await sqlite3(database, "SELECT key, scope, kind, revision, stamp, time FROM compacted_entry ORDER BY kind")
                    == "k|/a|reset|8||1800000008.0\nk|/a|set|7|\(Rows.phone)|1800000007.0")
            let last = try Rows.transaction(storage) { try $0.lastChange(of: "k", at: "/a", after: 0) }
            #expect(last == LoggedChange(compacted: .reset, key: "k", scope: "/a", revision: 8, time: 1_800_000_008, stamp: nil))
        }
    }

    @Test("A store as 0004 left it takes 0005: compacted_entry is made, and compaction fills it")
    func aStoreAt0004TakesCompactedEntry() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let database = folder.appending(path: "prefs.sqlite").path
        do {
            let queue = try DatabaseQueue(path: database)
            try StoreDatabase.migrator.migrate(queue, upTo: "0004_sync")
            try queue.close()
        }
        try await Rows.withStorage(folder) { storage in
            #expect(try await sqlite3(database, "SELECT count(*) FROM compacted_entry") == "0")
            try Rows.transaction(storage) { connection in
                try connection.appendChange(Rows.change(3, .reset, scope: "/a", stamp: Rows.phone))
                try connection.compactChangeLog(keepingFrom: 4, newestRevision: 3)
            }
            #expect(
                try await sqlite3(database, "SELECT key, scope, kind, revision, stamp, time FROM compacted_entry")
                    == "k|/a|reset|3|\(Rows.phone)|1800000003.0")
            #expect(try await storage.newestCompactedAway(matching: ChangeLogFilter(key: "k")) == 3)
        }
    }
}
