import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit
@testable import PrefsPostgres
import TestHarness
import Testing

/// What compacting the log dropped, on PostgreSQL: `prefsd_write`'s compaction records, for each
/// key, scope and kind among the rows it drops, the newest revision dropped with its stamp and time
/// (`compacted_entry`), in the statement that drops them; the storage reads it back through a
/// filter's conditions and by `lastChange`.
@Suite("PostgreSQL: what compaction dropped", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(5)))
struct PostgresCompactedEntryTests {
    typealias Rows = PostgresSyncStorageTests

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

    /// The rows of `compacted_entry`, as `key|scope|kind|revision`, in order.
    static func marks(_ database: PostgresTestDatabase) async throws -> [String] {
        try await database.connection { connection, logger in
            var marks: [String] = []
            for try await (key, scope, kind, revision) in try await connection.query(
                "SELECT key, scope, kind, revision FROM compacted_entry ORDER BY key COLLATE \"C\", scope COLLATE \"C\", kind COLLATE \"C\"",
                logger: logger
            ).decode((String, String, String, Int64).self) {
                marks.append("\(key)|\(scope)|\(kind)|\(revision)")
            }
            return marks
        }
    }

    @Test("Compaction records the newest revision it drops of each key, scope and kind, keeping the highest; filters select them")
    func marks() async throws {
        try await withPostgresDatabase { database in
            try await Rows.withStorage(database) { storage in
                try await Rows.onWriter(storage) { connection, transactions in
                    _ = try transactions.begin(after: 0, optimistic: false)
                    for change in Self.changes { try connection.appendChange(change) }
                    try connection.upsertValue(key: "a", scope: .root, value: 6, revision: 6)
                    try connection.insertLock(key: "b", scope: "/accounts/bob", revision: 7)
                    try connection.upsertValue(key: "a", scope: "/accounts/alice", value: 8, revision: 8)
                    _ = try transactions.commit(newestRevision: 10, following: 0, keysRead: .some([]))
                }
                func logged(_ filter: ChangeLogFilter) async throws -> [Revision] {
                    try await storage.changeLog(matching: filter, limit: 100).changes.map(\.event.revision)
                }
                func newest(_ filter: ChangeLogFilter) async throws -> Revision {
                    try await storage.newestCompactedAway(matching: filter)
                }
                #expect(try await logged(ChangeLogFilter(reach: "/accounts/alice")) == [1, 2, 4, 6, 8, 9, 10], "no draft's row")
                #expect(try await newest(ChangeLogFilter()) == 0, "nothing dropped yet")

                try await Rows.batch(storage, after: 10, newestRevision: 10) { connection in
                    try connection.compactChangeLog(keepingFrom: 9, newestRevision: 10)
                }
                #expect(try await logged(ChangeLogFilter()) == [6, 7, 8, 9, 10], "the rows that set what is stored now kept")
                #expect(
                    try await Self.marks(database) == ["a||schema|4", "a|/|set|1", "a|/accounts/alice|set|2", "b|/accounts/bob|set|3"],
                    "no row for the draft's")
                #expect(try await newest(ChangeLogFilter()) == 4)
                #expect(try await newest(ChangeLogFilter(key: "a")) == 4)
                #expect(try await newest(ChangeLogFilter(key: "b")) == 3)
                #expect(try await newest(ChangeLogFilter(key: "c")) == 0)
                #expect(try await newest(ChangeLogFilter(prefix: "b")) == 3)
                #expect(try await newest(ChangeLogFilter(prefix: "_")) == 0, "`_` is no wildcard")
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

                // `a` set again at /: its row 6 no longer sets what is stored, and goes with the
                // next compaction, in the same commit.
                try await Rows.batch(storage, after: 10, newestRevision: 11) { connection in
                    try connection.upsertValue(key: "a", scope: .root, value: 11, revision: 11)
                    try connection.appendChange(Rows.change(11, .set, key: "a", scope: "/", value: 11))
                    try connection.compactChangeLog(keepingFrom: 11, newestRevision: 11)
                }
                #expect(try await logged(ChangeLogFilter()) == [7, 8, 11])
                #expect(
                    try await Self.marks(database) == [
                        "a||schema|4", "a|/|set|6", "a|/accounts/alice|conflict|9", "a|/accounts/alice|set|2", "b|/|set|10",
                        "b|/accounts/bob|set|3",
                    ])
                #expect(try await newest(ChangeLogFilter(reach: "/accounts/carol", kinds: [.set])) == 10)
                #expect(try await newest(ChangeLogFilter(key: "a", subtree: "/accounts")) == 9)
            }
        }
    }

    /// The rows of `compacted_entry` with their stamps and times, as `key|scope|kind|revision|stamp|time`,
    /// by kind.
    static func stampedMarks(_ database: PostgresTestDatabase) async throws -> [String] {
        try await database.connection { connection, logger in
            var marks: [String] = []
            for try await (key, scope, kind, revision, stamp, time) in try await connection.query(
                "SELECT key, scope, kind, revision, stamp, time FROM compacted_entry ORDER BY kind COLLATE \"C\"", logger: logger
            ).decode((String, String, String, Int64, String?, Double?).self) {
                marks.append("\(key)|\(scope)|\(kind)|\(revision)|\(stamp ?? "")|\(time.map { String(Int64($0)) } ?? "")")
            }
            return marks
        }
    }

    /// What a host's writer finds as the last change of `k` at `scope` after `after`, in a batch
    /// it rolls back.
    static func lastChange(_ storage: PostgresStorage, at scope: ScopePath, after: Revision, base: Revision) async throws
        -> LoggedChange?
    {
        try await Rows.onWriter(storage) { connection, transactions in
            _ = try transactions.begin(after: base, optimistic: true)
            defer { connection.rollback() }
            return try connection.lastChange(of: "k", at: scope, after: after)
        }
    }

    @Test("lastChange falls back to the newest set or reset compaction dropped, with its stamp and time; the log's rows come first")
    func lastChangeOfACompactedEntry() async throws {
        // Revisions 1 to 6 of `k`: at /a a set and a reset by the phone, a set made here, a reset
        // by the laptop (all dropped by a compaction from 7); at /b a set by the phone, stored now
        // (kept). `other` at /a is stored too.
        let changes = [
            Rows.change(1, .set, scope: "/a", value: 1, stamp: Rows.phone),
            Rows.change(2, .reset, scope: "/a", stamp: Rows.phone),
            Rows.change(3, .set, scope: "/a", value: 3),
            Rows.change(4, .reset, scope: "/a", stamp: Rows.laptop),
            Rows.change(5, .set, scope: "/b", value: 5, stamp: Rows.phone),
            Rows.change(6, .set, key: "other", scope: "/a", value: 6),
        ]
        try await withPostgresDatabase { database in
            try await Rows.withStorage(database) { storage in
                try await Rows.batch(storage, after: 0, newestRevision: 6) { connection in
                    for change in changes { try connection.appendChange(change) }
                    try connection.upsertValue(key: "k", scope: "/b", value: 5, revision: 5)
                    try connection.upsertValue(key: "other", scope: "/a", value: 6, revision: 6)
                    try connection.compactChangeLog(keepingFrom: 7, newestRevision: 6)
                    #expect(try connection.lastChange(of: "k", at: "/a", after: 0) == changes[3], "the batch's own row, not sent yet")
                }
                #expect(
                    try await Self.stampedMarks(database) == ["k|/a|reset|4|\(Rows.laptop)|1800000004", "k|/a|set|3||1800000003"],
                    "the newest dropped row's stamp and time, of each kind")
                #expect(
                    try await Self.lastChange(storage, at: "/a", after: 0, base: 6)
                        == LoggedChange(compacted: .reset, key: "k", scope: "/a", revision: 4, time: 1_800_000_004, stamp: Rows.laptop))
                #expect(try await Self.lastChange(storage, at: "/a", after: 3, base: 6)?.event.revision == 4)
                #expect(try await Self.lastChange(storage, at: "/a", after: 4, base: 6) == nil, "nothing after it")
                #expect(try await Self.lastChange(storage, at: "/", after: 0, base: 6) == nil)
                #expect(try await Self.lastChange(storage, at: "/b", after: 0, base: 6) == changes[4], "the log's row, whole")

                try await Rows.batch(storage, after: 6, newestRevision: 7) { connection in
                    try connection.upsertValue(key: "k", scope: "/a", value: 7, revision: 7)
                    try connection.appendChange(Rows.change(7, .set, scope: "/a", value: 7, stamp: Rows.phone))
                }
                #expect(
                    try await Self.lastChange(storage, at: "/a", after: 0, base: 7)
                        == Rows.change(7, .set, scope: "/a", value: 7, stamp: Rows.phone))
                // A reset made here, dropped by the next compaction: newer, it replaces the laptop's.
                try await Rows.batch(storage, after: 7, newestRevision: 8) { connection in
                    try connection.deleteValue(key: "k", scope: "/a")
                    try connection.appendChange(Rows.change(8, .reset, scope: "/a"))
                    try connection.compactChangeLog(keepingFrom: 9, newestRevision: 8)
                }
                #expect(
                    try await Self.stampedMarks(database) == ["k|/a|reset|8||1800000008", "k|/a|set|7|\(Rows.phone)|1800000007"])
                #expect(
                    try await Self.lastChange(storage, at: "/a", after: 0, base: 8)
                        == LoggedChange(compacted: .reset, key: "k", scope: "/a", revision: 8, time: 1_800_000_008, stamp: nil))
            }
        }
    }

    @Test("A database as 0004 left it takes 0005: compacted_entry is made, and prefsd_write's compaction fills it")
    func aDatabaseAt0004TakesCompactedEntry() async throws {
        try await withPostgresDatabase { database in
            try await database.connection { connection, logger in
                try await PostgresMigrator.migrate(
                    connection, location: PostgresLocation(url: database.url), logger: logger, upTo: "0004_sync")
            }
            try await Rows.withStorage(database) { storage in
                #expect(try await Self.stampedMarks(database) == [])
                try await Rows.batch(storage, after: 0, newestRevision: 3) { connection in
                    try connection.appendChange(Rows.change(3, .reset, scope: "/a", stamp: Rows.phone))
                    try connection.compactChangeLog(keepingFrom: 4, newestRevision: 3)
                }
                #expect(
                    try await Self.stampedMarks(database) == ["k|/a|reset|3|\(Rows.phone)|1800000003"], "prefsd_write as 0005 has it")
                #expect(try await storage.newestCompactedAway(matching: ChangeLogFilter(key: "k")) == 3)
            }
        }
    }
}
