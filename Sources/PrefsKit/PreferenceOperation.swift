/// One step of a batch (`POST /v1/prefs:batch`): set or reset a key at a scope.
///
/// A batch is applied in one transaction: all of its operations, or none.
public struct PreferenceOperation: Codable, Sendable, Hashable {
    /// What the operation does.
    public enum Kind: String, Codable, Sendable, Hashable {
        case set, reset
    }

    /// `set` or `reset`.
    public var op: Kind
    /// The key.
    public var key: String
    /// The scope; `/` when absent.
    public var scope: ScopePath
    /// The value, for `set`.
    public var value: JSONValue?
    /// For `reset`: also remove the values of every scope below.
    public var recursive: Bool?

    /// Sets `key` to `value` at `scope`.
    public static func set(_ key: String, _ value: JSONValue, scope: ScopePath = .root) -> Self {
        Self(op: .set, key: key, scope: scope, value: value, recursive: nil)
    }

    /// Removes `key`'s value at `scope` (and below it when `recursive`).
    public static func reset(_ key: String, scope: ScopePath = .root, recursive: Bool = false) -> Self {
        Self(op: .reset, key: key, scope: scope, value: nil, recursive: recursive ? true : nil)
    }

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
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a batch operation")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        op = try container.decode(Kind.self, forKey: .op)
        key = try container.decode(String.self, forKey: .key)
        scope = try container.decodeIfPresent(ScopePath.self, forKey: .scope) ?? .root
        value = try container.decodeIfPresent(JSONValue.self, forKey: .value)
        recursive = try container.decodeIfPresent(Bool.self, forKey: .recursive)
    }
}

/// A batch of operations, as `POST /v1/prefs:batch` takes it.
public struct PreferenceBatch: Codable, Sendable, Hashable {
    public var operations: [PreferenceOperation]

    public init(operations: [PreferenceOperation]) {
        self.operations = operations
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case operations
    }

    /// Decodes a batch, refusing unknown fields.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a batch")
        operations = try decoder.container(keyedBy: CodingKeys.self).decode([PreferenceOperation].self, forKey: .operations)
    }
}

/// What a write answers: the revision it committed at (for a batch, one per operation).
public struct WriteResult: Codable, Sendable, Hashable {
    /// The revision of the (last) change; the store's current revision when nothing changed.
    public var revision: Revision
    /// For a batch: each operation's own revision, in order.
    public var revisions: [Revision]?
    /// For a reset: how many stored values it removed; for an unlock: how many locks (1, or 0
    /// when there was none).
    public var removed: Int?

    public init(revision: Revision, revisions: [Revision]? = nil, removed: Int? = nil) {
        self.revision = revision
        self.revisions = revisions
        self.removed = removed
    }
}

extension WriteResult {
    /// The wire JSON of a write's answer, written directly, the same as ``WireJSON`` would
    /// encode it (sorted keys, absent members left out): every write answers with it.
    public var wireJSON: String {
        var json = "{"
        if let removed { json += #""removed":\#(removed),"# }
        json += #""revision":\#(revision)"#
        if let revisions { json += #","revisions":[\#(revisions.map(String.init).joined(separator: ","))]"# }
        return json + "}"
    }
}
