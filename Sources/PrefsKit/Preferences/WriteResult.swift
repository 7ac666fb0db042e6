

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
        // Appended piece by piece into room made once: every write's answer is one allocation.
        var json = ""
        json.reserveCapacity(48 + (revisions?.count ?? 0) * 20)
        json += "{"
        if let removed {
            json += #""removed":"#
            json += String(removed)
            json += ","
        }
        json += #""revision":"#
        json += String(revision)
        if let revisions {
            json += #","revisions":["#
            for (index, revision) in revisions.enumerated() {
                if index > 0 { json += "," }
                json += String(revision)
            }
            json += "]"
        }
        json += "}"
        return json
    }
}
