import NIOCore
import PostgresNIO
import PrefsKit

/// The others' changes a group commit answers (`prefsd_commit_batch`'s `changes`, a
/// `prefsd_change[]`), decoded from the driver's binary format: an array of records, each field
/// with its type and length. No text is parsed but the values themselves.
struct ChangeRows: PostgresDecodable {
    /// The rows, in revision order.
    var rows: [ChangeRow]

    init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard format == .binary, let dimensions = buffer.readInteger(as: Int32.self),
            buffer.readInteger(as: Int32.self) != nil, buffer.readInteger(as: UInt32.self) != nil
        else { throw Self.malformed("no array header") }
        rows = []
        guard dimensions > 0 else { return }
        guard dimensions == 1, let count = buffer.readInteger(as: Int32.self), buffer.readInteger(as: Int32.self) != nil else {
            throw Self.malformed("\(dimensions) dimensions")
        }
        rows.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard var record = try Self.field(&buffer) else { throw Self.malformed("a NULL row") }
            rows.append(try ChangeRow(record: &record))
        }
    }

    /// The bytes of the next length-prefixed field, nil for NULL.
    static func field(_ buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = buffer.readInteger(as: Int32.self) else { throw malformed("a field without its length") }
        guard length >= 0 else { return nil }
        guard let bytes = buffer.readSlice(length: Int(length)) else { throw malformed("a field shorter than its length") }
        return bytes
    }

    /// The error for an answer that is not the `prefsd_change[]` this build expects.
    static func malformed(_ detail: String) -> PrefsError {
        PrefsError(.internal, "The database's commit procedure answered changes this build cannot read (\(detail)).")
    }
}

extension ChangeRow {
    /// A `prefsd_change` record in binary: its field count, then each field's type and value.
    fileprivate init(record: inout ByteBuffer) throws {
        let columns = Int32(CodingKeys.read.count)
        guard record.readInteger(as: Int32.self) == columns else { throw ChangeRows.malformed("a row without \(columns) fields") }
        func next(_ type: PostgresDataType) throws -> ByteBuffer? {
            guard record.readInteger(as: UInt32.self) == type.rawValue else {
                throw ChangeRows.malformed("a field not of type \(type)")
            }
            return try ChangeRows.field(&record)
        }
        func text() throws -> String? {
            try next(.text).map { String(buffer: $0) }
        }
        func bigint() throws -> Int64? {
            guard var bytes = try next(.int8) else { return nil }
            guard let number = bytes.readInteger(as: Int64.self) else { throw ChangeRows.malformed("a short bigint") }
            return number
        }
        guard let revision = try bigint(), let kind = try text() else {
            throw ChangeRows.malformed("a row without a revision or kind")
        }
        self.revision = revision
        self.kind = kind
        key = try text()
        scope = try text()
        value = try text()
        oldValue = try text()
        draft = try text()
        attachment = try text()
        account = try text()
        thread = try text()
        previousThread = try text()
        draftRevision = try bigint()
        valid = try next(.bool).map { $0.readableBytesView.first != 0 }
    }
}
