internal import GRDB
internal import GRDBSQLite

/// The arguments of one run of a statement, bound in order through SQLite's C API
/// (``GRDB/Database/run(_:binding:)``).
///
/// Texts are copied into ``texts``, space on the stack that outlives the run, and bound where
/// they lie (`SQLITE_STATIC`): SQLite would otherwise copy each one into memory of its own
/// (`SQLITE_TRANSIENT`), a `malloc` and a `free` per text — sixteen a keyed write. A text that
/// does not fit is bound as SQLite's own copy.
struct StatementBinding {
    fileprivate let statement: SQLiteStatement
    /// Where the texts bound so far are copied, for as long as the statement runs.
    fileprivate let texts: UnsafeMutableRawBufferPointer
    /// How many bytes of ``texts`` are taken.
    private var textsUsed = 0
    /// How many parameters are bound so far: the next one is `count + 1`.
    fileprivate var count: Int32 = 0

    /// The bytes of ``texts``: room for a keyed write's texts, whose values are small as a rule,
    /// and no more than Swift's temporary allocations take on the stack without asking whether
    /// there is room (1 KiB): above that, the space itself would be a `malloc` on the writer's
    /// thread.
    fileprivate static let textsCapacity = 1024

    fileprivate init(statement: SQLiteStatement, texts: UnsafeMutableRawBufferPointer) {
        self.statement = statement
        self.texts = texts
    }

    /// Binds the next parameter to `text`, or to NULL.
    mutating func bind(_ text: String?) {
        count += 1
        guard var text else { return bindNull() }
        text.withUTF8 { bytes in
            guard bytes.count <= texts.count - textsUsed, let base = texts.baseAddress else {
                _ = sqlite3_bind_text(statement, count, bytes.baseAddress, Int32(bytes.count), Self.transient)
                return
            }
            let copy = base + textsUsed
            if let source = bytes.baseAddress { copy.copyMemory(from: source, byteCount: bytes.count) }
            textsUsed += bytes.count
            _ = sqlite3_bind_text(statement, count, copy.assumingMemoryBound(to: CChar.self), Int32(bytes.count), Self.static)
        }
    }

    /// Binds the next parameter to `integer`, or to NULL.
    mutating func bind(_ integer: Int64?) {
        count += 1
        guard let integer else { return bindNull() }
        sqlite3_bind_int64(statement, count, integer)
    }

    /// Binds the next parameter to `integer`, or to NULL.
    mutating func bind(_ integer: Int?) {
        bind(integer.map(Int64.init))
    }

    /// Binds the next parameter to `flag` as 1 or 0, or to NULL.
    mutating func bind(_ flag: Bool?) {
        bind(flag.map { $0 ? Int64(1) : 0 })
    }

    /// Binds the next parameter to `real`, or to NULL.
    mutating func bind(_ real: Double?) {
        count += 1
        guard let real else { return bindNull() }
        sqlite3_bind_double(statement, count, real)
    }

    private func bindNull() {
        sqlite3_bind_null(statement, count)
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// `SQLITE_STATIC`: the bytes stay where they are until the statement is reset.
    private static let `static` = unsafeBitCast(0, to: sqlite3_destructor_type.self)
}

/// The row a statement run through ``GRDB/Database/run(_:binding:eachRow:)`` stands on, its columns
/// read by index through SQLite's C API.
struct StatementRow {
    fileprivate let statement: SQLiteStatement

    /// The text of column `index` (from 0); empty for NULL.
    func text(_ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, index) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))), as: UTF8.self)
    }

    /// The integer of column `index` (from 0).
    func integer(_ index: Int32) -> Int64 {
        sqlite3_column_int64(statement, index)
    }

    /// The real number of column `index` (from 0).
    func real(_ index: Int32) -> Double {
        sqlite3_column_double(statement, index)
    }
}

extension Database {
    /// Runs `sql` — compiled once per connection — to its end, with the arguments `bind` binds in
    /// order, through SQLite's C API.
    ///
    /// For the statements the writer runs for every request (a change's row, its value's, its
    /// outcome's, the request's savepoint): GRDB's `execute(arguments:)` boxes each argument as a
    /// `DatabaseValue`, binds each one inside a closure of its own and tells its observation of
    /// transactions about the statement, which costs more than SQLite's own work for a row of
    /// the change log's 19 columns. No transaction observer watches the writer's connection.
    func run(_ sql: String, binding bind: (inout StatementBinding) -> Void = { _ in }) throws {
        try run(sql, binding: bind) { _ in }
    }

    /// Runs `sql` as ``run(_:binding:)`` does, passing each row it returns to `row`.
    func run(
        _ sql: String, binding bind: (inout StatementBinding) -> Void = { _ in }, eachRow row: (StatementRow) throws -> Void
    ) throws {
        let statement = try cachedStatement(sql: sql).sqliteStatement
        sqlite3_reset(statement)
        try withUnsafeTemporaryAllocation(byteCount: StatementBinding.textsCapacity, alignment: 1) { texts in
            // Reset, its texts let go of, before the space they were copied to is.
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            var binding = StatementBinding(statement: statement, texts: texts)
            bind(&binding)
            let expected = sqlite3_bind_parameter_count(statement)
            guard binding.count == expected else {
                throw DatabaseError(
                    resultCode: .SQLITE_MISUSE, message: "\(binding.count) arguments for \(expected) parameters", sql: sql)
            }
            while true {
                switch sqlite3_step(statement) {
                case SQLITE_DONE: return
                case SQLITE_ROW: try row(StatementRow(statement: statement))
                case let code:
                    throw DatabaseError(
                        resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: sql)
                }
            }
        }
    }
}
