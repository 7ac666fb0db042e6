import PrefsKit

/// Which recorded conflicts to read (``PrefsStorage/conflicts(_:)``).
package struct ConflictQuery: Sendable, Hashable {
    /// Only conflicts at this scope or below it.
    package var subtree: ScopePath?
    /// Only those of this key.
    package var key: String?
    /// Only those recorded after this revision.
    package var after: Revision?
    /// Only those recorded at or after this time (seconds since 1970).
    package var from: Double?
    /// At most this many.
    package var limit: Int
    /// Newest first, rather than oldest first.
    package var newestFirst: Bool

    /// A query.
    package init(
        subtree: ScopePath? = nil, key: String? = nil, after: Revision? = nil, from: Double? = nil, limit: Int = 1000,
        newestFirst: Bool = false
    ) {
        self.subtree = subtree
        self.key = key
        self.after = after
        self.from = from
        self.limit = limit
        self.newestFirst = newestFirst
    }
}
