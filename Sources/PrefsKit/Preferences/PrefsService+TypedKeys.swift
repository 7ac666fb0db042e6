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
    @discardableResult
    public func set<Value: Codable & Sendable & Equatable>(_ keyPath: KeyPath<PreferenceValues, Value>, _ value: Value, scope: ScopePath = .root)
        async throws -> WriteResult
    {
        try await set(TypedKey(keyPath), value, scope: scope)
    }

    /// Sets a typed key at `scope`.
    @discardableResult
    public func set<Value: Codable & Sendable & Equatable>(_ key: TypedKey<Value>, _ value: Value, scope: ScopePath = .root) async throws -> WriteResult {
        try await set(key.name, to: try JSONValue(encoding: value), scope: scope)
    }

    /// A typed key's effective value at `scope` — its default when the stored JSON is unset or
    /// does not decode as the key's type — and, with `explain`, every layer in ``TypedPreference/chain``.
    public func resolve<Value: Codable & Sendable & Equatable>(
        _ keyPath: KeyPath<PreferenceValues, Value>, scope: ScopePath = .root, explain: Bool = false
    ) async throws -> TypedPreference<Value> {
        try await resolve(TypedKey(keyPath), scope: scope, explain: explain)
    }

    /// A typed key's effective value at `scope`, and with `explain` every layer.
    public func resolve<Value: Codable & Sendable & Equatable>(
        _ key: TypedKey<Value>, scope: ScopePath = .root, explain: Bool = false
    ) async throws -> TypedPreference<Value> {
        let resolved = try await resolve(key.name, scope: scope, explain: explain)
        return TypedPreference(
            value: key.value(of: resolved), source: resolved.source, revision: resolved.revision, chain: resolved.chain)
    }

    /// A typed key's effective value at `scope`: first the current one, then each new one.
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
    /// ``PreferenceKey/schema``). `invalid_key` for a key path that names no key.
    @discardableResult
    public func register(keys keyPaths: [PartialKeyPath<PreferenceValues>]) async throws -> WriteResult {
        try await register(keys: try keyPaths.map { keyPath throws(PrefsError) in try PreferenceValues.key(readBy: keyPath) })
    }

    /// Registers the schemas of typed keys (each key's ``PreferenceKey/schema``).
    @discardableResult
    public func register(keys: [any PreferenceKey.Type]) async throws -> WriteResult {
        try await register(schemas: Dictionary(keys.map { ($0.name, $0.schema) }, uniquingKeysWith: { _, last in last }))
    }
}
