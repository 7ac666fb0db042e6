import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit

/// A change-log entry as the commit functions read it (a missing member is NULL), and as the
/// database returns one: the row of table `change` (`Migrations/postgres/`), and — without its
/// time, author, reason and stamp — of the composite types `prefsd_change` and
/// `prefsd_change_page_row`.
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
        /// The columns below are the table's only: the composite types a commit answers lack them.
        case oldRevision = "old_revision"
        case createdAt = "created_at"
        case author, agent, host, reason, stamp

        /// The columns of the composite types, in order: what taking in another host's change reads.
        static let read = allCases.prefix { $0 != .oldRevision }
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
    var oldRevision: Revision?
    var createdAt: Double?
    var author: String?
    var agent: String?
    var host: String?
    var reason: String?
    var stamp: String?

    /// The row of `change`.
    init(_ change: LoggedChange) {
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
        oldRevision = change.oldRevision
        createdAt = change.time
        author = change.author?.name
        agent = change.author?.agent
        host = change.author?.host
        reason = change.reason
        stamp = change.stamp?.description
    }

    /// A change log row as the database sent it, by column name: with `whole`, a row of the
    /// table (``ChangeLogFilter/columns``), else of the composite types.
    init(_ row: PostgresRandomAccessRow, whole: Bool = false) throws {
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
        if whole {
            oldRevision = try column(.oldRevision)
            createdAt = try column(.createdAt)
            author = try column(.author)
            agent = try column(.agent)
            host = try column(.host)
            reason = try column(.reason)
            stamp = try column(.stamp)
        }
    }

    /// The change the row logs.
    func loggedChange() throws -> LoggedChange {
        LoggedChange(
            event: ChangeEvent(
                revision: revision, kind: ChangeEvent.Kind(rawValue: kind), key: key, scope: try scope.map { try ScopePath($0) },
                value: try value.map { try JSONValue(parsing: $0) }, draft: draft, attachment: attachment, account: account,
                thread: thread, previousThread: previousThread, draftRevision: draftRevision, valid: valid),
            oldValue: oldValue, oldRevision: oldRevision, time: createdAt ?? 0,
            author: author.map { ChangeAuthor(name: $0, agent: agent, host: host) }, reason: reason,
            stamp: try stamp.map { try SyncStamp(stored: $0) })
    }
}
