/// The whole store, or one scope's subtree, as JSON: `GET /v1/dump`, `prefsctl dump`.
///
/// Loading a dump (`POST /v1/load`) sets every value and lock in it and registers every schema,
/// in one transaction; dumping a store a dump was loaded into gives the same dump back. The
/// arrays are sorted (by key, then scope), so a dump is stable byte for byte.
public struct PrefsDump: Codable, Sendable, Hashable {
    /// A value set at a scope.
    public struct Value: Codable, Sendable, Hashable {
        /// The key.
        public var key: String
        /// The scope it is set at.
        public var scope: ScopePath
        /// The value.
        public var value: JSONValue

        /// `key` set to `value` at `scope`.
        ///
        /// - Parameters:
        ///   - key: The key.
        ///   - scope: The scope it is set at.
        ///   - value: The value.
        public init(key: String, scope: ScopePath, value: JSONValue) {
            self.key = key
            self.scope = scope
            self.value = value
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case key, scope, value
        }

        /// Decodes a dump's value, refusing unknown fields.
        /// - Parameter decoder: The decoder to read from.
        /// - Throws: ``PrefsError`` `invalid_request` for an unknown field; `DecodingError` for
        ///   a missing or mistyped one.
        public init(from decoder: any Decoder) throws {
            try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a dump's value")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.decode(String.self, forKey: .key)
            scope = try container.decode(ScopePath.self, forKey: .scope)
            value = try container.decode(JSONValue.self, forKey: .value)
        }
    }

    /// A lock at a scope.
    public typealias Lock = PreferenceLock

    /// The format version; this build writes and reads 1.
    public var format: Int
    /// The subtree dumped (`/` for everything).
    public var scope: ScopePath
    /// Every registered schema, by key.
    public var schemas: [String: PreferenceSchema]
    /// Every value set in the subtree.
    public var values: [Value]
    /// Every lock in the subtree.
    public var locks: [Lock]

    /// The format version this build writes.
    public static let currentFormat = 1

    /// A dump of `scope`'s subtree, in the current format.
    ///
    /// - Parameters:
    ///   - scope: The subtree dumped (`/` for everything).
    ///   - schemas: Every registered schema, by key.
    ///   - values: Every value set in the subtree.
    ///   - locks: Every lock in the subtree.
    public init(scope: ScopePath, schemas: [String: PreferenceSchema], values: [Value], locks: [Lock]) {
        self.format = Self.currentFormat
        self.scope = scope
        self.schemas = schemas
        self.values = values.sorted { ($0.key, $0.scope) < ($1.key, $1.scope) }
        self.locks = locks.sorted { ($0.key, $0.scope) < ($1.key, $1.scope) }
    }

    /// Builds the dump of `subtree` from per-key states.
    package init(subtree: ScopePath, keys: some Sequence<(key: String, state: KeyState)>) {
        var schemas: [String: PreferenceSchema] = [:]
        var values: [Value] = []
        var locks: [Lock] = []
        for (key, state) in keys {
            if let schema = state.schema { schemas[key] = schema }
            for (scope, stored) in state.values where subtree.contains(scope) {
                values.append(Value(key: key, scope: scope, value: stored.value))
            }
            for scope in state.locks.keys where subtree.contains(scope) {
                locks.append(Lock(key: key, scope: scope))
            }
        }
        self.init(scope: subtree, schemas: schemas, values: values, locks: locks)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case format, scope, schemas, values, locks
    }

    /// Decodes a dump, refusing unknown fields and any format but ``currentFormat``; absent
    /// `scope`, `schemas`, `values` and `locks` are `/` and empty.
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: ``PrefsError`` `invalid_request` for an unknown field or format;
    ///   `DecodingError` for a missing or mistyped field.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a dump")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(Int.self, forKey: .format)
        guard format == Self.currentFormat else {
            throw PrefsError(.invalidRequest, "This dump has format \(format); this prefsd reads format \(Self.currentFormat).")
        }
        scope = try container.decodeUnlessAbsent(ScopePath.self, forKey: .scope) ?? .root
        schemas = try container.decodeUnlessAbsent([String: PreferenceSchema].self, forKey: .schemas) ?? [:]
        values = try container.decodeUnlessAbsent([Value].self, forKey: .values) ?? []
        locks = try container.decodeUnlessAbsent([Lock].self, forKey: .locks) ?? []
    }
}
