/// A lock on a key at a scope: `{"key", "scope"}` in a dump, and in a `locked` error, where it
/// names the lock that refused the write.
public struct PreferenceLock: Codable, Sendable, Hashable {
    /// The locked key.
    public var key: String
    /// The scope it is locked at.
    public var scope: ScopePath

    /// The lock on `key` at `scope`.
    ///
    /// - Parameters:
    ///   - key: The locked key.
    ///   - scope: The scope it is locked at.
    public init(key: String, scope: ScopePath) {
        self.key = key
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case key, scope
    }

    /// Decodes a lock, refusing unknown fields.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: ``PrefsError`` `invalid_request` for an unknown field; `DecodingError` for a
    ///   missing or mistyped one.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a lock")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(String.self, forKey: .key)
        scope = try container.decode(ScopePath.self, forKey: .scope)
    }
}
