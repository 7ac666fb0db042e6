

/// What a write answers: the revision it committed at (for a batch, one per operation). A write
/// that changes nothing — the value already stored, a lock already there, nothing to remove —
/// makes no revision and answers the current one.
public struct WriteResult: Codable, Sendable, Hashable {
    /// The revision of the (last) change; the store's current revision when nothing changed.
    public var revision: Revision
    /// For a batch: each operation's own revision, in order.
    public var revisions: [Revision]?
    /// For a reset: how many stored values it removed; for an unlock: how many locks (0 or 1).
    public var removed: Int?

    /// An answer with its revision and, for a batch or a removal, the rest.
    ///
    /// - Parameters:
    ///   - revision: The revision of the (last) change.
    ///   - revisions: For a batch: each operation's own revision, in order.
    ///   - removed: For a reset or an unlock: how many values or locks it removed.
    public init(revision: Revision, revisions: [Revision]? = nil, removed: Int? = nil) {
        self.revision = revision
        self.revisions = revisions
        self.removed = removed
    }
}

extension WriteResult {
    /// The wire JSON of a write's answer, written directly, the same as `WireJSON` would
    /// encode it (sorted keys, absent members left out): every write answers with it.
    public var wireJSON: String {
        var json = "{"
        if let removed { json += #""removed":\#(removed),"# }
        json += #""revision":\#(revision)"#
        if let revisions { json += #","revisions":[\#(revisions.map(String.init).joined(separator: ","))]"# }
        return json + "}"
    }
}
