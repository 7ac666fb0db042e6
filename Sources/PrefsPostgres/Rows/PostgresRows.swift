import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit

/// The SQL for reading rows back, and turning them into the domain's values by column name.
/// Both the writer (inside its transaction, waiting on futures) and the readers (async, from the
/// pool) run these same queries.
enum PostgresRows {
    static let draftColumns = """
        id, account, thread, position, reply_to, text, content_warning, visibility, language, sensitive, poll,
        created_at, updated_at, revision, conflict_of, deleted_elsewhere
        """
    static let attachmentColumns = """
        id, draft, position, kind, mime_type, filename, byte_size, sha256, alt_text, width, height
        """

    // MARK: Queries

    /// One draft.
    static func draftQuery(_ id: UUID) -> PostgresQuery {
        "SELECT \(unescaped: draftColumns) FROM draft WHERE id = \(id.uuidString)"
    }

    /// Drafts of an account and/or a thread, by account, thread, position, creation — in the
    /// byte order (and with the nulls first) SQLite gives, whatever the database's collation.
    static func draftsQuery(account: String?, thread: String?) -> PostgresQuery {
        """
        SELECT \(unescaped: draftColumns) FROM draft
        WHERE (\(account)::text IS NULL OR account = \(account)) AND (\(thread)::text IS NULL OR thread = \(thread))
        ORDER BY account COLLATE "C", thread COLLATE "C" NULLS FIRST, position NULLS FIRST, created_at, id COLLATE "C"
        """
    }

    /// The attachments of some drafts, by draft and position.
    static func attachmentsQuery(of drafts: [UUID]) -> PostgresQuery {
        """
        SELECT \(unescaped: attachmentColumns) FROM attachment WHERE draft = ANY(\(drafts.map(\.uuidString)))
        ORDER BY draft, position
        """
    }

    /// A page of the change log: the changes after `revision` up to `through`, at most `limit`,
    /// each row with the log's oldest revision (`log_oldest_revision`); with no change, one row
    /// whose change columns are NULL. One statement, so the page and the log's start come from one
    /// snapshot, in one round trip.
    static func changePageQuery(after revision: Revision, through: Revision, limit: Int) -> PostgresQuery {
        """
        SELECT state.oldest_revision AS log_oldest_revision, page.* FROM change_log_state state
        LEFT JOIN LATERAL (
            SELECT \(unescaped: ChangeRow.CodingKeys.selectList) FROM change
            WHERE revision > \(revision) AND revision <= \(through) ORDER BY revision LIMIT \(Int64(limit))
        ) page ON true
        WHERE state.id = 1 ORDER BY page.revision
        """
    }

    /// The rows `filter` selects, at most `limit` of them in its order, each beside the log's
    /// oldest revision — one row of NULLs but that if none matches.
    static func changeLogQuery(_ filter: ChangeLogFilter, limit: Int) -> PostgresQuery {
        let (sql, parameters) = filter.sql(.postgres, limit: limit)
        return PostgresQuery(
            unsafeSQL: """
                SELECT state.oldest_revision AS log_oldest_revision, page.* FROM change_log_state state
                LEFT JOIN LATERAL (\(sql)) page ON true
                WHERE state.id = 1 ORDER BY page.revision \(filter.newestFirst ? "DESC" : "ASC")
                """,
            binds: bindings(parameters))
    }

    /// The newest revision compaction dropped among the rows `filter` selects (`newest`, 0 if
    /// none): ``ChangeLogFilter/newestCompactedAwaySQL(_:)``.
    static func newestCompactedAwayQuery(_ filter: ChangeLogFilter) -> PostgresQuery {
        let (sql, parameters) = filter.newestCompactedAwaySQL(.postgres)
        return PostgresQuery(unsafeSQL: sql, binds: bindings(parameters))
    }

    /// A filter's parameters, bound.
    private static func bindings(_ parameters: [ChangeLogFilter.Parameter]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: parameters.count)
        for parameter in parameters {
            switch parameter {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .real(let real): bindings.append(real)
            }
        }
        return bindings
    }

    // MARK: Rows

    /// The ids of drafts read by ``draftQuery(_:)`` or ``draftsQuery(account:thread:)``, to read
    /// their attachments with.
    ///
    /// - Throws: ``PrefsError`` `internal` if one is not a UUID.
    static func draftIDs(_ rows: [PostgresRow]) throws -> [UUID] {
        try rows.map { try uuid($0.makeRandomAccess()["id"].decode(String.self)) }
    }

    /// Drafts from their rows and their attachments' rows.
    static func drafts(_ rows: [PostgresRow], attachments attachmentRows: [PostgresRow]) throws -> [Draft] {
        let attachments = Dictionary(grouping: try attachmentRows.map(attachment), by: \.draft)
        return try rows.map { row in try draft(row, attachments: attachments) }
    }

    private static func draft(_ row: PostgresRow, attachments: [UUID: [Attachment]]) throws -> Draft {
        let row = row.makeRandomAccess()
        let id = try uuid(row["id"].decode(String.self))
        return Draft(
            id: id, account: try row["account"].decode(String.self), thread: try row["thread"].decode(String?.self),
            position: try row["position"].decode(Int?.self), replyTo: try row["reply_to"].decode(String?.self),
            text: try row["text"].decode(String.self), contentWarning: try row["content_warning"].decode(String?.self),
            visibility: Draft.Visibility(rawValue: try row["visibility"].decode(String.self)) ?? .public,
            language: try row["language"].decode(String?.self), sensitive: try row["sensitive"].decode(Bool.self),
            poll: try row["poll"].decode(String?.self).map { try JSONDecoder().decode(Draft.Poll.self, from: Data($0.utf8)) },
            createdAt: Date(timeIntervalSince1970: try row["created_at"].decode(Double.self)),
            updatedAt: Date(timeIntervalSince1970: try row["updated_at"].decode(Double.self)),
            revision: try row["revision"].decode(Int64.self), attachments: attachments[id] ?? [],
            conflictOf: try row["conflict_of"].decode(String?.self).flatMap(UUID.init(uuidString:)),
            deletedElsewhere: try row["deleted_elsewhere"].decode(Bool?.self))
    }

    private static func attachment(_ row: PostgresRow) throws -> Attachment {
        let row = row.makeRandomAccess()
        return Attachment(
            id: try uuid(row["id"].decode(String.self)), draft: try uuid(row["draft"].decode(String.self)),
            position: try row["position"].decode(Int.self),
            kind: Attachment.Kind(rawValue: try row["kind"].decode(String.self)) ?? .file,
            mimeType: try row["mime_type"].decode(String.self), filename: try row["filename"].decode(String.self),
            byteSize: try row["byte_size"].decode(Int64.self), sha256: try row["sha256"].decode(String.self),
            altText: try row["alt_text"].decode(String?.self), width: try row["width"].decode(Int?.self),
            height: try row["height"].decode(Int?.self))
    }

    /// The page ``changePageQuery(after:through:limit:)`` read, or a writer's `prefsd_begin`,
    /// `prefsd_reads_after` or `prefsd_commit_after` (`Migrations/postgres/`), whose rows have the
    /// same columns; with `whole`, the page ``changeLogQuery(_:limit:)`` read, whose rows have the
    /// table's columns too.
    static func changePage(_ rows: [PostgresRow], whole: Bool = false) throws -> ChangeLogPage {
        var changes: [LoggedChange] = []
        var oldest: Revision = 1
        for row in rows {
            let row = row.makeRandomAccess()
            oldest = try row["log_oldest_revision"].decode(Int64.self)
            if try row["revision"].decode(Int64?.self) != nil { changes.append(try ChangeRow(row, whole: whole).loggedChange()) }
        }
        return ChangeLogPage(changes: changes, oldestRevision: oldest)
    }

    /// The log's newest revision and what other hosts committed before a batch, from the row of
    /// `prefsd_commit_batch`: the log's bounds, and the changes as an array of rows.
    static func committedElsewhere(_ rows: [PostgresRow]) throws -> (newestRevision: Revision, page: ChangeLogPage) {
        guard let row = rows.first?.makeRandomAccess() else {
            throw PrefsError(.internal, "The database's commit procedure answered no row.")
        }
        return (
            try row["log_newest_revision"].decode(Int64.self),
            ChangeLogPage(
                changes: try row["changes"].decode(ChangeRows.self).rows.map { try $0.loggedChange() },
                oldestRevision: try row["log_oldest_revision"].decode(Int64.self))
        )
    }

    private static func uuid(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw PrefsError(.internal, "The database holds an id that is not a UUID: '\(text)'.")
        }
        return id
    }
}
