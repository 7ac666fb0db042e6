import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit

/// A change-log entry as the commit functions read it (a missing member is NULL), and as the
/// database returns one (without `created_at`): the row of table `change`, and of the composite
/// types `prefsd_change` and `prefsd_change_page_row` (`Migrations/postgres/0001_baseline.sql`).
struct ChangeRow: Encodable {
    /// The row's columns, in the order of the table and the composite types: the one place their
    /// names are spelled on this side (the JSON the commit functions read uses them too).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case revision, kind, key, scope, value
        case oldValue = "old_value"
        case draft, attachment, account, thread
        case previousThread = "previous_thread"
        case draftRevision = "draft_revision"
        case valid
        /// Written with the row, never read back.
        case createdAt = "created_at"

        /// The columns read back, in order: all but ``createdAt``.
        static let read = allCases.filter { $0 != .createdAt }
        /// ``read``, as a select list.
        static let selectList = read.map(\.rawValue).joined(separator: ", ")
    }

    var revision: Revision
    var kind: String
    var key: String?
    var scope: String?
    var value: String?
    var oldValue: String?
    var draft: String?
    var attachment: String?
    var account: String?
    var thread: String?
    var previousThread: String?
    var draftRevision: Int64?
    var valid: Bool?
    var createdAt: Double?

    /// The row of `change`, logged at `createdAt` (seconds since 1970).
    init(_ change: LoggedChange, createdAt: Double) {
        let event = change.event
        revision = event.revision
        kind = event.kind.rawValue
        key = event.key
        scope = event.scope?.path
        value = event.value?.canonicalText
        oldValue = change.oldValue
        draft = event.draft
        attachment = event.attachment
        account = event.account
        thread = event.thread
        previousThread = event.previousThread
        draftRevision = event.draftRevision
        valid = event.valid
        self.createdAt = createdAt
    }

    /// A change log row as the database sent it, by column name.
    init(_ row: PostgresRandomAccessRow) throws {
        func column<T: PostgresDecodable>(_ column: CodingKeys, _: T.Type = T.self) throws -> T {
            try row[column.rawValue].decode(T.self)
        }
        revision = try column(.revision)
        kind = try column(.kind)
        key = try column(.key)
        scope = try column(.scope)
        value = try column(.value)
        oldValue = try column(.oldValue)
        draft = try column(.draft)
        attachment = try column(.attachment)
        account = try column(.account)
        thread = try column(.thread)
        previousThread = try column(.previousThread)
        draftRevision = try column(.draftRevision)
        valid = try column(.valid)
    }

    /// The change the row logs.
    func loggedChange() throws -> LoggedChange {
        LoggedChange(
            event: ChangeEvent(
                revision: revision, kind: ChangeEvent.Kind(rawValue: kind), key: key, scope: try scope.map { try ScopePath($0) },
                value: try value.map { try JSONValue(parsing: $0) }, draft: draft, attachment: attachment, account: account,
                thread: thread, previousThread: previousThread, draftRevision: draftRevision, valid: valid),
            oldValue: oldValue)
    }
}
