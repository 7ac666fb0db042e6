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

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case key, prefix, scope, toRevision
    }

    /// Decodes a body as strictly as every other: no unknown field, no `null` for a field that
    /// may only be absent, a revision ≥ 0.
    package init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a revert")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decodeUnlessAbsent(String.self, forKey: .key)
        prefix = try container.decodeUnlessAbsent(String.self, forKey: .prefix)
        scope = try container.decode(ScopePath.self, forKey: .scope)
        toRevision = try container.decode(Revision.self, forKey: .toRevision)
        guard toRevision >= 0 else {
            throw PrefsError(.invalidRequest, "A revert's toRevision is a revision ≥ 0, not \(toRevision).")
        }
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
