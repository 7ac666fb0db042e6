/// A typed key's effective value at a scope, where it came from and, when explained, every layer.
public struct TypedPreference<Value: Sendable>: Sendable {
    /// The effective value: the stored JSON decoded, else the key's default.
    public var value: Value
    /// Where it came from.
    public var source: PreferenceSource
    /// The store's revision when this was read.
    public var revision: Revision
    /// With `explain`: every layer consulted, first to last, each with the JSON it holds (see
    /// ``ResolvedPreference/chain``).
    public var chain: [ChainLayer]?
}

/// The service through typed key paths: `\.fontSize` instead of `"timeline.fontSize"` and JSON.
extension PrefsService {
    /// Sets a typed key at `scope`.
    ///
    /// - Parameters:
    ///   - keyPath: The key's property on ``PreferenceValues``, such as `\.fontSize`.
    ///   - value: Its new value.
    ///   - scope: Where to set it (`/` by default).
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `locked` below a lock, `invalid_value` for a value the schema
    ///   refuses.
    @discardableResult
    public func set<Value: Codable & Sendable & Equatable>(_ keyPath: KeyPath<PreferenceValues, Value>, _ value: Value, scope: ScopePath = .root)
        async throws -> WriteResult
    {
        try await set(TypedKey(keyPath), value, scope: scope)
    }

    /// Sets a typed key at `scope`.
    ///
    /// - Parameters:
    ///   - key: The typed key.
    ///   - value: Its new value.
    ///   - scope: Where to set it (`/` by default).
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `locked` below a lock, `invalid_value` for a value the schema
    ///   refuses.
    @discardableResult
    public func set<Value: Codable & Sendable & Equatable>(_ key: TypedKey<Value>, _ value: Value, scope: ScopePath = .root) async throws -> WriteResult {
        try await set(key.name, to: try JSONValue(encoding: value), scope: scope)
    }

    /// A typed key's effective value at `scope` — its default when the stored JSON is unset or
    /// does not decode as the key's type — and, with `explain`, every layer in ``TypedPreference/chain``.
    ///
    /// - Parameters:
    ///   - keyPath: The key's property on ``PreferenceValues``, such as `\.fontSize`.
    ///   - scope: The scope to resolve it at (`/` by default).
    ///   - explain: Whether the answer lists every layer.
    /// - Returns: The key's typed value at `scope` and where it comes from.
    /// - Throws: ``PrefsError`` when the service cannot answer.
    public func resolve<Value: Codable & Sendable & Equatable>(
        _ keyPath: KeyPath<PreferenceValues, Value>, scope: ScopePath = .root, explain: Bool = false
    ) async throws -> TypedPreference<Value> {
        try await resolve(TypedKey(keyPath), scope: scope, explain: explain)
    }

    /// A typed key's effective value at `scope`, and with `explain` every layer.
    ///
    /// - Parameters:
    ///   - key: The typed key.
    ///   - scope: The scope to resolve it at (`/` by default).
    ///   - explain: Whether the answer lists every layer.
    /// - Returns: The key's typed value at `scope` (its default when unset or when the stored
    ///   JSON does not decode as its type) and where it comes from.
    /// - Throws: ``PrefsError`` when the service cannot answer.
    public func resolve<Value: Codable & Sendable & Equatable>(
        _ key: TypedKey<Value>, scope: ScopePath = .root, explain: Bool = false
    ) async throws -> TypedPreference<Value> {
        let resolved = try await resolve(key.name, scope: scope, explain: explain)
        return TypedPreference(
            value: key.value(of: resolved), source: resolved.source, revision: resolved.revision, chain: resolved.chain)
    }

    /// A typed key's effective value at `scope`: first the current one, then each new one.
    ///
    /// - Parameters:
    ///   - keyPath: The key's property on ``PreferenceValues``, such as `\.fontSize`.
    ///   - scope: The scope to resolve it at (`/` by default).
    /// - Returns: The values; the stream ends with the service's error when the key cannot be
    ///   resolved or watched.
    public func values<Value: Codable & Sendable & Equatable>(of keyPath: KeyPath<PreferenceValues, Value>, scope: ScopePath = .root)
        -> AsyncThrowingStream<Value, any Error>
    {
        let key = TypedKey(keyPath)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let current = try await resolve(key, scope: scope)
                    continuation.yield(current.value)
                    for try await event in watch(WatchRequest(keys: [key.name], scope: scope, since: current.revision))
                    where !event.kind.isNotice {
                        continuation.yield(key.value(of: event.value))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Registers the schemas of the keys these key paths name — `register(keys: [\.fontSize,
    /// \.statusContentMode])` — whether declared by hand or with `@Preference` (each key's
    /// ``PreferenceKey/schema``).
    ///
    /// - Parameter keyPaths: Properties of ``PreferenceValues`` declared with keys.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `invalid_key` for a key path that names no key, or as
    ///   ``PreferencesService/register(schemas:)`` does.
    @discardableResult
    public func register(keys keyPaths: [PartialKeyPath<PreferenceValues>]) async throws -> WriteResult {
        try await register(keys: try keyPaths.map { keyPath throws(PrefsError) in try PreferenceValues.key(readBy: keyPath) })
    }

    /// Registers the schemas of typed keys (each key's ``PreferenceKey/schema``).
    ///
    /// - Parameter keys: The keys' types; of two with the same name, the last is kept.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError``, as ``PreferencesService/register(schemas:)`` does.
    @discardableResult
    public func register(keys: [any PreferenceKey.Type]) async throws -> WriteResult {
        try await register(schemas: Dictionary(keys.map { ($0.name, $0.schema) }, uniquingKeysWith: { _, last in last }))
    }
}
