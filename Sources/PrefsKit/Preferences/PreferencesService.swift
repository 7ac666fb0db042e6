/// Preferences: values set at scopes and resolved environment-style, locks, schemas, dump and
/// load. The half of ``PrefsService`` that keeps an application's settings.
///
/// A write that changes nothing (the value already stored, a lock already there, a reset or an
/// unlock of nothing) makes no revision and no change event, and answers the current revision.
public protocol PreferencesService: Sendable {
    /// The effective value of `key` at `scope`, its source and, with `explain`, every layer.
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference

    /// The effective value at `scope` of every key that has one there, optionally only keys
    /// starting with `prefix`, sorted by key.
    func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference]

    /// Sets `key` to `value` at `scope`. When the value is already stored there, nothing changes
    /// (no revision, no change event) and the answer carries the current revision.
    @discardableResult
    func set(_ key: KeyName, to value: JSONValue, scope: ScopePath) async throws -> WriteResult

    /// Removes `key`'s value at `scope`, and with `recursive` at every scope below it too. The
    /// answer's `removed` counts the values removed; with none, nothing changes and the answer
    /// carries the current revision.
    @discardableResult
    func reset(_ key: KeyName, scope: ScopePath, recursive: Bool) async throws -> WriteResult

    /// Applies every operation in one transaction: all of them, or none.
    @discardableResult
    func apply(_ batch: PreferenceBatch) async throws -> WriteResult

    /// Locks `key` at `scope`: it resolves to the lock scope's value there and everywhere below,
    /// and cannot be changed below it. Locking where a lock already is changes nothing, and the
    /// answer carries the current revision.
    @discardableResult
    func lock(_ key: KeyName, scope: ScopePath) async throws -> WriteResult

    /// Removes the lock on `key` at `scope`. The answer's `removed` is 1, or 0 when there was no
    /// lock there: then nothing changes and the answer carries the current revision.
    @discardableResult
    func unlock(_ key: KeyName, scope: ScopePath) async throws -> WriteResult

    /// Every registered schema, by key.
    func schemas() async throws -> [String: PreferenceSchema]

    /// Registers (or replaces) schemas. Refused if a stored value breaks its new schema.
    @discardableResult
    func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult

    /// The values, locks and schemas of `scope`'s subtree.
    func dump(scope: ScopePath) async throws -> PrefsDump

    /// Loads a dump in one transaction: all of it, or none of it. It merges: values and locks
    /// the store holds and the dump does not stay — unless `replacing`, which first removes
    /// those of the dump's scope and below, so that this subtree ends up equal to the dump.
    /// The dump's schemas are registered either way; none is removed.
    @discardableResult
    func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult
}

extension PreferencesService {
    /// ``resolve(_:scope:explain:)`` by a name not yet checked: `invalid_key` if it is not a key name.
    public func resolve(_ key: String, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        try await resolve(KeyName(key), scope: scope, explain: explain)
    }

    /// ``set(_:to:scope:)`` by a name not yet checked: `invalid_key` if it is not a key name.
    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath) async throws -> WriteResult {
        try await set(KeyName(key), to: value, scope: scope)
    }

    /// ``reset(_:scope:recursive:)`` by a name not yet checked: `invalid_key` if it is not a key name.
    @discardableResult
    public func reset(_ key: String, scope: ScopePath, recursive: Bool) async throws -> WriteResult {
        try await reset(KeyName(key), scope: scope, recursive: recursive)
    }

    /// ``lock(_:scope:)`` by a name not yet checked: `invalid_key` if it is not a key name.
    @discardableResult
    public func lock(_ key: String, scope: ScopePath) async throws -> WriteResult {
        try await lock(KeyName(key), scope: scope)
    }

    /// ``unlock(_:scope:)`` by a name not yet checked: `invalid_key` if it is not a key name.
    @discardableResult
    public func unlock(_ key: String, scope: ScopePath) async throws -> WriteResult {
        try await unlock(KeyName(key), scope: scope)
    }

    /// The effective value of `key` at `scope` (default `/`).
    public func resolve(_ key: String, scope: ScopePath = .root) async throws -> ResolvedPreference {
        try await resolve(key, scope: scope, explain: false)
    }

    /// Loads a dump, merging it into what the store holds (``load(_:replacing:)``).
    @discardableResult
    public func load(_ dump: PrefsDump) async throws -> WriteResult {
        try await load(dump, replacing: false)
    }

    /// Sets `key` to `value` at `/`.
    @discardableResult
    public func set(_ key: String, to value: JSONValue) async throws -> WriteResult {
        try await set(key, to: value, scope: .root)
    }

    /// The schema of one key; `not_found` if it has none.
    public func schema(for key: String) async throws -> PreferenceSchema {
        _ = try KeyName(key)
        guard let schema = try await schemas()[key] else {
            throw PrefsError(.notFound, "'\(key)' has no schema.")
        }
        return schema
    }
}
