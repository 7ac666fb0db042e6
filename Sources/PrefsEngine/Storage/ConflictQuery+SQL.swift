import Foundation
import PrefsKit

extension ConflictQuery {
    /// The columns every read of `sync_conflict` selects, in the order the storages decode them.
    package static let columns = "revision, key, scope, rule, winner, losers, created_at, detail"

    /// The query selecting the conflicts this asks for, at most ``limit``, and its parameters —
    /// as ``ChangeLogFilter/sql(_:limit:)`` writes the change log's, a subtree matched the same way.
    package func sql(_ dialect: ChangeLogFilter.Dialect) -> (sql: String, parameters: [ChangeLogFilter.Parameter]) {
        var conditions: [String] = []
        var parameters: [ChangeLogFilter.Parameter] = []
        /// The next parameter's placeholder, binding `value` to it.
        func bind(_ value: ChangeLogFilter.Parameter) -> String {
            parameters.append(value)
            return dialect == .sqlite ? "?" : "$\(parameters.count)"
        }
        if let subtree, subtree != .root {
            let below = subtree.path + "/"
            switch dialect {
            case .sqlite:
                // '0' follows '/': the scopes below `subtree` sort between "subtree/" and "subtree0".
                conditions.append(
                    "(scope = \(bind(.text(subtree.path))) OR (scope >= \(bind(.text(below))) AND scope < \(bind(.text(subtree.path + "0")))))")
            case .postgres:
                var escaped = ""
                for character in below {
                    if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
                    escaped.append(character)
                }
                conditions.append("(scope = \(bind(.text(subtree.path))) OR scope LIKE \(bind(.text(escaped + "%"))) ESCAPE '\\')")
            }
        }
        if let key { conditions.append("key = \(bind(.text(key)))") }
        if let after { conditions.append("revision > \(bind(.integer(after)))") }
        if let from { conditions.append("created_at >= \(bind(.real(from)))") }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return (
            "SELECT \(Self.columns) FROM sync_conflict\(filter) ORDER BY revision \(newestFirst ? "DESC" : "ASC") "
                + "LIMIT \(bind(.integer(Int64(max(limit, 0)))))",
            parameters
        )
    }
}

extension SyncConflict {
    /// The winner and the losers as the storages keep them: JSON text, keys sorted.
    package func storedSides() throws -> (winner: String, losers: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (
            String(decoding: try encoder.encode(winner), as: UTF8.self), String(decoding: try encoder.encode(losers), as: UTF8.self)
        )
    }

    /// A conflict as a storage kept it, from the columns of ``ConflictQuery/columns``.
    package init(
        storedRevision revision: Revision, key: String, scope: String, rule: String, winner: String, losers: String,
        time: Double, detail: String?
    ) throws {
        let decoder = JSONDecoder()
        do {
            self.init(
                revision: revision, key: key, scope: try ScopePath(scope), rule: Rule(rawValue: rule),
                winner: try decoder.decode(Side.self, from: Data(winner.utf8)),
                losers: try decoder.decode([Side].self, from: Data(losers.utf8)), time: Date(timeIntervalSince1970: time), detail: detail)
        } catch {
            throw PrefsError(.internal, "The database holds a conflict (revision \(revision)) this build cannot read: \(error).")
        }
    }
}

extension SyncStamp {
    /// A stamp as a storage kept it (its ``description``).
    ///
    /// - Throws: ``PrefsError`` `internal` for text that is not a stamp.
    package init(stored text: String) throws {
        guard let stamp = SyncStamp(text) else {
            throw PrefsError(.internal, "The database holds a stamp that is not MILLISECONDS.COUNTER@DEVICE: '\(text)'.")
        }
        self = stamp
    }
}
