/// One step of a batch (`POST /v1/prefs:batch`): set or reset a key at a scope.
///
/// A batch is applied in one transaction: all of its operations, or none.
public struct PreferenceOperation: Codable, Sendable, Hashable {
    /// What the operation does.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// Set a key's value at a scope.
        case set
        /// Remove a key's value at a scope.
        case reset
    }

    /// `set` or `reset`.
    public var op: Kind
    /// The key.
    public var key: String
    /// The scope; `/` when absent.
    public var scope: ScopePath
    /// The value, for `set`. A `"value": null` decodes as ``JSONValue/null``, which a `set`
    /// refuses as `PUT` refuses it (`invalid_value`); nil means the operation has no `value`.
    public var value: JSONValue?
    /// For `reset`: also remove the values of every scope below.
    public var recursive: Bool?

    /// Sets `key` to `value` at `scope`.
    ///
    /// - Parameters:
    ///   - key: The key to set.
    ///   - value: Its new value.
    ///   - scope: Where to set it (`/` by default).
    /// - Returns: The operation.
    public static func set(_ key: String, _ value: JSONValue, scope: ScopePath = .root) -> Self {
        Self(op: .set, key: key, scope: scope, value: value, recursive: nil)
    }

    /// Removes `key`'s value at `scope` (and below it when `recursive`).
    ///
    /// - Parameters:
    ///   - key: The key to reset.
    ///   - scope: Where to remove its value (`/` by default).
    ///   - recursive: Whether to remove its values at every scope below `scope` too.
    /// - Returns: The operation.
    public static func reset(_ key: String, scope: ScopePath = .root, recursive: Bool = false) -> Self {
        Self(op: .reset, key: key, scope: scope, value: nil, recursive: recursive ? true : nil)
    }

    /// An operation with every field given; ``set(_:_:scope:)`` and ``reset(_:scope:recursive:)`` are shorter.
    ///
    /// - Parameters:
    ///   - op: `set` or `reset`.
    ///   - key: The key.
    ///   - scope: The scope.
    ///   - value: The value, for `set`; nil for `reset`.
    ///   - recursive: For `reset`: whether to remove the values of every scope below too.
    public init(op: Kind, key: String, scope: ScopePath, value: JSONValue?, recursive: Bool?) {
        self.op = op
        self.key = key
        self.scope = scope
        self.value = value
        self.recursive = recursive
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case op, key, scope, value, recursive
    }

    /// Decodes an operation, refusing unknown fields: a misspelt `recursive` must not pass.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: ``PrefsError`` `invalid_request` for an unknown field; `DecodingError` for a
    ///   missing or mistyped one.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a batch operation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        op = try container.decode(Kind.self, forKey: .op)
        key = try container.decode(String.self, forKey: .key)
        scope = try container.decodeUnlessAbsent(ScopePath.self, forKey: .scope) ?? .root
        // Not `decodeIfPresent`, which reads `null` as absent.
        if container.contains(.value) {
            value = try container.decode(JSONValue.self, forKey: .value)
        } else {
            value = nil
        }
        recursive = try container.decodeUnlessAbsent(Bool.self, forKey: .recursive)
    }
}
