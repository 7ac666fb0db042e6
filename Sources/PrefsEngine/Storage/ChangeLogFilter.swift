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
    /// (which resolves there), or at none (a schema's).
    package var reach: ScopePath?
    /// Only changes of these kinds.
    package var kinds: [ChangeEvent.Kind]?
    /// Only changes by this author.
    package var author: String?
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
        author: String? = nil, after: Revision? = nil, through: Revision? = nil, from: Double? = nil, to: Double? = nil,
        newestFirst: Bool = false
    ) {
        self.key = key
        self.prefix = prefix
        self.subtree = subtree
        self.scopes = scopes
        self.reach = reach
        self.kinds = kinds
        self.author = author
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
        var conditions: [String] = []
        var parameters: [Parameter] = []
        /// The next parameter's placeholder, binding `value` to it.
        func bind(_ value: Parameter) -> String {
            parameters.append(value)
            return dialect == .sqlite ? "?" : "$\(parameters.count)"
        }
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
            if subtree == .root { return "scope IS NOT NULL" }
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
            conditions.append("(scope IS NULL\(aboveCondition) OR \(within(reach)))")
        }
        if let kinds {
            conditions.append("kind IN (\(kinds.map { bind(.text($0.rawValue)) }.joined(separator: ", ")))")
        }
        if let scopes {
            let list = scopes.map { bind(.text($0.path)) }.joined(separator: ", ")
            conditions.append(list.isEmpty ? "scope IS NULL" : "(scope IN (\(list)) OR scope IS NULL)")
        }
        if let author { conditions.append("author = \(bind(.text(author)))") }
        if let after { conditions.append("revision > \(bind(.integer(after)))") }
        if let through { conditions.append("revision <= \(bind(.integer(through)))") }
        if let from { conditions.append("created_at >= \(bind(.real(from)))") }
        if let to { conditions.append("created_at <= \(bind(.real(to)))") }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = newestFirst ? "DESC" : "ASC"
        return ("SELECT \(Self.columns) FROM change\(filter) ORDER BY revision \(order) LIMIT \(bind(.integer(Int64(limit))))", parameters)
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
