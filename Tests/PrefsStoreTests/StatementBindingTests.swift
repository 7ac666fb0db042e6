import GRDB
@testable import PrefsStore
import Testing

/// The writer's hottest statements, bound and run through SQLite's C API (`Database.run`): every
/// kind of value and NULL arrive as bound and are read back from each row, SQLite's errors come
/// back as GRDB's, and a statement that failed runs again.
@Suite("Store: statements bound through SQLite's C API")
struct StatementBindingTests {
    static let insert = "INSERT INTO t (text, integer, real, flag, unique_key) VALUES (?, ?, ?, ?, ?)"

    static func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (text TEXT, integer INTEGER, real REAL, flag INTEGER, unique_key TEXT UNIQUE)")
        }
        return queue
    }

    @Test func bindsEveryKindOfValueAndNull() throws {
        let queue = try Self.table()
        try queue.write { db in
            try db.run(Self.insert) { row in
                row.bind("h\u{E9}llo w\u{F6}rld" as String?)
                row.bind(Int64.max as Int64?)
                row.bind(1.5 as Double?)
                row.bind(true as Bool?)
                row.bind(7 as Int?)
            }
            try db.run(Self.insert) { row in
                row.bind(nil as String?)
                row.bind(nil as Int64?)
                row.bind(nil as Double?)
                row.bind(nil as Bool?)
                row.bind("second" as String?)
            }
            let rows = try Row.fetchAll(db, sql: "SELECT text, integer, real, flag, unique_key FROM t ORDER BY rowid")
            #expect(rows[0]["text"] == "h\u{E9}llo w\u{F6}rld")
            #expect(rows[0]["integer"] == Int64.max)
            #expect(rows[0]["real"] == 1.5)
            #expect(rows[0]["flag"] == 1)
            #expect(rows[0]["unique_key"] == "7")
            #expect(rows[1].databaseValues.prefix(4).allSatisfy { $0.isNull })
        }
    }

    @Test func bindsTextsBeyondTheStackSpaceAndEmptyOnes() throws {
        let queue = try Self.table()
        // 800 bytes fit the run's space for texts, and the next 800 do not.
        let (long, longer) = (String(repeating: "a", count: 800), String(repeating: "\u{E9}", count: 400))
        try queue.write { db in
            for (first, second) in [(long, longer), ("", "")] {
                try db.run("INSERT INTO t (text, unique_key) VALUES (?, ?)") { row in
                    row.bind(first)
                    row.bind(second)
                }
            }
            let rows = try Row.fetchAll(db, sql: "SELECT text, unique_key FROM t ORDER BY rowid")
            #expect(rows.map { $0["text"] as String? } == [long, ""])
            #expect(rows.map { $0["unique_key"] as String? } == [longer, ""])
        }
    }

    @Test func readsEachRowsColumns() throws {
        let queue = try Self.table()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t (text, integer, real) VALUES ('h\u{E9}', 7, 2.5), (NULL, -1, 0), ('x', 3, 1)")
            var rows: [(String, Int64, Double)] = []
            try db.run("SELECT text, integer, real FROM t WHERE integer < ? ORDER BY rowid") { row in
                row.bind(5 as Int64?)
            } eachRow: { row in
                rows.append((row.text(0), row.integer(1), row.real(2)))
            }
            #expect(rows.map(\.0) == ["", "x"])
            #expect(rows.map(\.1) == [-1, 3])
            #expect(rows.map(\.2) == [0, 1])
            try db.run("SELECT text FROM t WHERE integer = 7") { _ in } eachRow: { row in #expect(row.text(0) == "h\u{E9}") }
        }
    }

    @Test func reportsSQLitesErrorsAndRunsAgain() throws {
        let queue = try Self.table()
        try queue.write { db in
            func insert(_ key: String) throws {
                try db.run(Self.insert) { row in
                    row.bind(key)
                    row.bind(1 as Int64?)
                    row.bind(1.0 as Double?)
                    row.bind(false as Bool?)
                    row.bind(key)
                }
            }
            try insert("a")
            let duplicate = try #require(throws: DatabaseError.self) { try insert("a") }
            #expect(duplicate.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
            #expect(duplicate.message?.contains("t.unique_key") == true)
            try insert("b")

            let missing = try #require(throws: DatabaseError.self) {
                try db.run(Self.insert) { row in row.bind("too few" as String?) }
            }
            #expect(missing.resultCode == .SQLITE_MISUSE)
            #expect(try String.fetchAll(db, sql: "SELECT unique_key FROM t ORDER BY rowid") == ["a", "b"])
        }
    }
}
