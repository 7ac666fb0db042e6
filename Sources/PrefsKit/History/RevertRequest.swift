/// The body of `POST /v1/prefs:revert`: a key or a prefix, the scope whose entries to put back,
/// and the revision to put back.
package struct RevertRequest: Codable, Sendable, Hashable {
    /// One key to revert.
    package var key: String?
    /// Every key starting with this.
    package var prefix: String?
    /// The scope whose entries to put back.
    package var scope: ScopePath
    /// The revision to put back.
    package var toRevision: Revision

    /// A request; exactly one of `key` and `prefix`.
    package init(key: String? = nil, prefix: String? = nil, scope: ScopePath, toRevision: Revision) {
        self.key = key
        self.prefix = prefix
        self.scope = scope
        self.toRevision = toRevision
    }

    /// What it reverts: `invalid_request` unless it names exactly one of a key and a prefix.
    package func target() throws -> RevertTarget {
        switch (key, prefix) {
        case (let key?, nil): return .key(try KeyName(key))
        case (nil, let prefix?): return .prefix(prefix)
        default:
            throw PrefsError(.invalidRequest, "A revert names either a \"key\" or a \"prefix\", not \(key == nil ? "neither" : "both").")
        }
    }
}
