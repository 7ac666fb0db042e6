import Foundation

/// Which changes of the audit log to read (`GET /v1/changes`, `prefsctl log`): filters, a range
/// of revisions or times, and the page's order and size.
///
/// Its coding is the endpoint's query: the same names, so that a page's ``ChangePage/next`` is
/// the query of the page after it.
public struct ChangeQuery: Sendable, Hashable, Codable {
    /// A bound of the range: a revision, or a time.
    public enum Bound: Sendable, Hashable {
        /// A revision: `since` excludes it (as a watch's `since`), `until` includes it.
        case revision(Revision)
        /// A time: both bounds include it.
        case time(Date)

        /// The bound as the query writes it: the revision's digits, or RFC 3339.
        public var text: String {
            switch self {
            case .revision(let revision): String(revision)
            case .time(let date): WireJSON.text(of: date)
            }
        }

        /// The bound `text` names: digits are a revision, anything else RFC 3339 time.
        ///
        /// - Parameter text: A revision such as `41`, or a time such as `2026-11-27T02:00:00Z`.
        /// - Throws: ``PrefsError`` (`invalid_request`) for anything else.
        public init(_ text: String) throws {
            if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                guard let revision = Revision(text) else {
                    throw PrefsError(.invalidRequest, "'\(text.prefix(40))' is too large for a revision.")
                }
                self = .revision(revision)
            } else {
                guard let date = WireJSON.date(from: text) else {
                    throw PrefsError(
                        .invalidRequest,
                        "'\(text.prefix(60))' is neither a revision nor a time: times are RFC 3339, such as 2026-11-27T02:00:00Z.")
                }
                self = .time(date)
            }
        }
    }

    /// The order of a page.
    public enum Order: String, Sendable, Hashable, Codable, CaseIterable {
        /// The newest change first, as `git log` shows commits; the default.
        case newestFirst = "desc"
        /// The oldest first, as a log file reads.
        case oldestFirst = "asc"
    }

    /// Only changes of keys starting with this (never draft changes).
    public var prefix: String?
    /// Only changes made at this scope or below it (never draft changes).
    public var scope: ScopePath?
    /// Only changes by this author (``ChangeAuthor/name``).
    public var author: String?
    /// Only changes after this revision, or at or after this time.
    public var since: Bound?
    /// Only changes up to this revision, or at or before this time.
    public var until: Bound?
    /// The most changes one page holds.
    public var limit: Int
    /// The page's order.
    public var order: Order

    /// The default page size.
    public static let defaultLimit = 100
    /// The largest page.
    public static let maximumLimit = 10_000

    /// A query.
    ///
    /// - Parameters:
    ///   - prefix: Only changes of keys starting with this.
    ///   - scope: Only changes at this scope or below.
    ///   - author: Only changes by this author.
    ///   - since: Only changes after this revision, or from this time.
    ///   - until: Only changes up to this revision or time.
    ///   - limit: The most changes one page holds (1 to ``maximumLimit``).
    ///   - order: The page's order, newest first by default.
    public init(
        prefix: String? = nil, scope: ScopePath? = nil, author: String? = nil, since: Bound? = nil, until: Bound? = nil,
        limit: Int = ChangeQuery.defaultLimit, order: Order = .newestFirst
    ) {
        self.prefix = prefix
        self.scope = scope
        self.author = author
        self.since = since
        self.until = until
        self.limit = limit
        self.order = order
    }

    /// Throws `invalid_request` for a limit out of range.
    package func check() throws {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw PrefsError(.invalidRequest, "limit takes 1 to \(Self.maximumLimit) changes a page, not \(limit).")
        }
    }

    /// The query as the endpoint's query items, in a fixed order.
    public var queryItems: [(name: String, value: String)] {
        var items: [(String, String)] = []
        if let prefix { items.append(("prefix", prefix)) }
        if let scope { items.append(("scope", scope.path)) }
        if let author { items.append(("author", author)) }
        if let since { items.append(("since", since.text)) }
        if let until { items.append(("until", until.text)) }
        if limit != Self.defaultLimit { items.append(("limit", String(limit))) }
        if order != .newestFirst { items.append(("order", order.rawValue)) }
        return items
    }

    private enum CodingKeys: String, CodingKey {
        case prefix, scope, author, since, until, limit, order
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix)
        scope = try container.decodeIfPresent(ScopePath.self, forKey: .scope)
        author = try container.decodeIfPresent(String.self, forKey: .author)
        since = try container.decodeIfPresent(String.self, forKey: .since).map(Bound.init)
        until = try container.decodeIfPresent(String.self, forKey: .until).map(Bound.init)
        limit = try container.decodeIfPresent(Int.self, forKey: .limit) ?? Self.defaultLimit
        order = try container.decodeIfPresent(Order.self, forKey: .order) ?? .newestFirst
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(prefix, forKey: .prefix)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(author, forKey: .author)
        try container.encodeIfPresent(since?.text, forKey: .since)
        try container.encodeIfPresent(until?.text, forKey: .until)
        try container.encode(limit, forKey: .limit)
        try container.encode(order, forKey: .order)
    }
}

/// A page of the audit log.
public struct ChangePage: Sendable, Hashable, Codable {
    /// The changes, in the query's order.
    public var changes: [ChangeRecord]
    /// The oldest revision the change log holds in full (a few older changes are kept where they
    /// set what is stored now).
    public var oldestRevision: Revision
    /// The query of the next page; nil after the last.
    public var next: ChangeQuery?

    /// A page.
    ///
    /// - Parameters:
    ///   - changes: The changes, in the query's order.
    ///   - oldestRevision: The oldest revision the log holds in full.
    ///   - next: The query of the next page, if there is one.
    public init(changes: [ChangeRecord], oldestRevision: Revision, next: ChangeQuery?) {
        self.changes = changes
        self.oldestRevision = oldestRevision
        self.next = next
    }
}
