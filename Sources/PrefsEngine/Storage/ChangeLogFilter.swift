import PrefsKit

/// Which rows of the change log a read selects — history, the audit log, reads in the past —
/// and the SQL that selects them, the same in both dialects but for how a prefix and a subtree
/// are matched.
package struct ChangeLogFilter: Sendable, Hashable {
    /// Only this key's changes.
    package var key: String?
    /// Only changes of keys starting with this.
    package var prefix: String?
    /// Only changes made at this scope or below it.
    package var subtree: ScopePath?
    /// Only changes made at one of these scopes, or at none (a schema's).
    package var scopes: [ScopePath]?
    /// Only changes within a device's reach at this scope: made at it, below it, above it
    /// (which resolves there), or at none (a schema's); and the changes of drafts of the accounts
    /// within it (`/accounts/<account>`).
    package var reach: ScopePath?
    /// Only changes of these kinds.
    package var kinds: [ChangeEvent.Kind]?
    /// Only changes by this author.
    package var author: String?
    /// Not the values a sync took in from this device (`set` changes whose stamp names it): a
    /// device is not sent its own values back — its results told it their revisions. (Its resets
    /// are sent: a result cannot say when an entry that has no value was removed.)
    package var notFromDevice: String?
    /// Only the changes of these revisions (read by the key index, ``KeyRevisions``).
    package var revisions: [Revision]?
    /// Only changes after this revision.
    package var after: Revision?
    /// Only changes up to this revision.
    package var through: Revision?
    /// Only changes committed at or after this time (seconds since 1970).
    package var from: Double?
    /// Only changes committed at or before this time.
    package var to: Double?
    /// Whether the newest change comes first.
    package var newestFirst: Bool

    /// A filter; with no arguments, every change, oldest first.
    package init(
        key: String? = nil, prefix: String? = nil, subtree: ScopePath? = nil, scopes: [ScopePath]? = nil,
        reach: ScopePath? = nil, kinds: [ChangeEvent.Kind]? = nil,
        author: String? = nil, notFromDevice: String? = nil, after: Revision? = nil, through: Revision? = nil,
        from: Double? = nil, to: Double? = nil, newestFirst: Bool = false
    ) {
        self.key = key
        self.prefix = prefix
        self.subtree = subtree
        self.scopes = scopes
        self.reach = reach
        self.kinds = kinds
        self.author = author
        self.notFromDevice = notFromDevice
        self.after = after
        self.through = through
        self.from = from
        self.to = to
        self.newestFirst = newestFirst
    }

    /// A value bound to one of the query's parameters.
    package enum Parameter: Sendable, Hashable {
        case text(String)
        case integer(Int64)
        case real(Double)
    }

    /// The database whose SQL to write.
    package enum Dialect: Sendable {
        /// `?` parameters; text compares byte by byte, and `LIKE` ignores ASCII case, so a
        /// prefix is a range.
        case sqlite
        /// `$1`, `$2`… parameters; text compares by the database's collation, so a prefix is
        /// `LIKE`.
        case postgres
    }

    /// The columns every read of the log selects, in the order the storages decode them.
    package static let columns = """
        revision, kind, key, scope, value, old_value, old_revision, draft, attachment, account, thread, \
        previous_thread, draft_revision, valid, created_at, author, agent, host, reason, stamp
        """

    /// The query selecting at most `limit` rows, and its parameters.
    package func sql(_ dialect: Dialect, limit: Int) -> (sql: String, parameters: [Parameter]) {
        var parameters: [Parameter] = []
        var conditions = entryConditions(dialect, table: .change, parameters: &parameters)
        /// The next parameter's placeholder, binding `value` to it.
        func bind(_ value: Parameter) -> String {
            parameters.append(value)
            return Self.placeholder(dialect, parameters.count)
        }
        if let author { conditions.append("author = \(bind(.text(author)))") }
        if let notFromDevice {
            // A stamp is MILLISECONDS.COUNTER@DEVICE: the device is all after the first '@'.
            let device =
                switch dialect {
                case .sqlite: "substr(stamp, instr(stamp, '@') + 1)"
                case .postgres: "substr(stamp, strpos(stamp, '@') + 1)"
                }
            conditions.append("(stamp IS NULL OR kind <> 'set' OR \(device) <> \(bind(.text(notFromDevice))))")
        }
        if let revisions {
            // One parameter whatever their number: a JSON array in SQLite, a list PostgreSQL
            // splits; each is then a look-up by the log's primary key.
            let list = revisions.map(String.init).joined(separator: ",")
            switch dialect {
            case .sqlite: conditions.append("revision IN (SELECT value FROM json_each(\(bind(.text("[" + list + "]")))))")
            case .postgres: conditions.append("revision = ANY(string_to_array(\(bind(.text(list))), ',')::bigint[])")
            }
        }
        if let after { conditions.append("revision > \(bind(.integer(after)))") }
        if let through { conditions.append("revision <= \(bind(.integer(through)))") }
        if let from { conditions.append("created_at >= \(bind(.real(from)))") }
        if let to { conditions.append("created_at <= \(bind(.real(to)))") }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = newestFirst ? "DESC" : "ASC"
        return ("SELECT \(Self.columns) FROM change\(filter) ORDER BY revision \(order) LIMIT \(bind(.integer(Int64(limit))))", parameters)
    }

    /// The query reading the newest revision compaction dropped among the rows the filter's key,
    /// prefix, subtree, scopes, reach and kinds select — from `compacted_entry`, which keeps one
    /// per key, scope and kind — 0 if it dropped none; and its parameters. The filter's authors,
    /// revisions and times do not apply: they are not kept.
    package func newestCompactedAwaySQL(_ dialect: Dialect) -> (sql: String, parameters: [Parameter]) {
        var parameters: [Parameter] = []
        let conditions = entryConditions(dialect, table: .compactedEntry, parameters: &parameters)
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return ("SELECT coalesce(max(revision), 0) AS newest FROM compacted_entry\(filter)", parameters)
    }

    /// A table whose rows name a key, a scope and a kind.
    private enum Table {
        /// The change log: a schema's rows have a NULL scope, and drafts' and tokens' no key.
        case change
        /// What compaction dropped, by key, scope and kind (`compacted_entry`): every row has a
        /// key, and a schema's has the scope ''.
        case compactedEntry
    }

    /// `$n` or `?`, for the `count`th parameter.
    private static func placeholder(_ dialect: Dialect, _ count: Int) -> String {
        dialect == .sqlite ? "?" : "$\(count)"
    }

    /// The conditions of the filter's key, prefix, subtree, scopes, reach and kinds on `table`,
    /// binding their values after `parameters`.
    private func entryConditions(_ dialect: Dialect, table: Table, parameters: inout [Parameter]) -> [String] {
        var conditions: [String] = []
        /// The next parameter's placeholder, binding `value` to it.
        func bind(_ value: Parameter) -> String {
            parameters.append(value)
            return Self.placeholder(dialect, parameters.count)
        }
        /// A schema's row: no scope, in the log (where only a key's row is one).
        let schema = table == .change ? "(scope IS NULL AND key IS NOT NULL)" : "scope = ''"
        if let key { conditions.append("key = \(bind(.text(key)))") }
        if let prefix {
            switch dialect {
            case .sqlite:
                // Keys are ASCII names: every one starting with `prefix` sorts below prefix + U+10FFFF.
                conditions.append("key >= \(bind(.text(prefix))) AND key < \(bind(.text(prefix + "\u{10FFFF}")))")
            case .postgres:
                conditions.append("key LIKE \(bind(.text(Self.likeEscaped(prefix) + "%"))) ESCAPE '\\'")
            }
        }
        /// The condition that `scope` is `subtree` or below it.
        func within(_ subtree: ScopePath) -> String {
            if subtree == .root { return table == .change ? "scope IS NOT NULL" : "scope <> ''" }
            let below = subtree.path + "/"
            switch dialect {
            case .sqlite:
                // '0' follows '/': the scopes below `subtree` sort between "subtree/" and "subtree0".
                return "(scope = \(bind(.text(subtree.path))) OR (scope >= \(bind(.text(below))) "
                    + "AND scope < \(bind(.text(subtree.path + "0")))))"
            case .postgres:
                return "(scope = \(bind(.text(subtree.path))) OR scope LIKE \(bind(.text(Self.likeEscaped(below) + "%"))) ESCAPE '\\')"
            }
        }
        if let subtree { conditions.append(within(subtree)) }
        if let reach {
            let above = sequence(first: reach, next: \.parent).dropFirst().map { bind(.text($0.path)) }
            let aboveCondition = above.isEmpty ? "" : " OR scope IN (\(above.joined(separator: ", ")))"
            // Bound in the order the condition reads them.
            let inReach = within(reach)
            // A draft's row: its account's scope, `/accounts/<account>`, within reach.
            let segments = reach.path.split(separator: "/")
            let drafts =
                switch (table, segments.count) {
                case (.change, 0): " OR draft IS NOT NULL"
                case (.change, 1) where segments[0] == "accounts": " OR draft IS NOT NULL"
                case (.change, 2) where segments[0] == "accounts":
                    " OR (draft IS NOT NULL AND account = \(bind(.text(String(segments[1])))))"
                default: ""
                }
            conditions.append("(\(schema)\(aboveCondition) OR \(inReach)\(drafts))")
        }
        if let kinds {
            conditions.append("kind IN (\(kinds.map { bind(.text($0.rawValue)) }.joined(separator: ", ")))")
        }
        if let scopes {
            let none = table == .change ? "scope IS NULL" : "scope = ''"
            let list = scopes.map { bind(.text($0.path)) }.joined(separator: ", ")
            conditions.append(list.isEmpty ? none : "(scope IN (\(list)) OR \(none))")
        }
        return conditions
    }

    /// `text` with `LIKE`'s wildcards and its escape character escaped.
    private static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
