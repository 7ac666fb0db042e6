/// Preferences: values set at scopes and resolved environment-style, locks, schemas, dump and
/// load. The half of ``PrefsService`` that keeps an application's settings.
///
/// A write that changes nothing (the value already stored, a lock already there, a reset or an
/// unlock of nothing) makes no revision and no change event, and answers the current revision.
///
/// Sets, resets, locks and unlocks may be conditional (`ifRevision`, HTTP `If-Match`): they go
/// through only if the key's revision at the scope (`KeyState/revision(at:)`: the newest of its
/// value's and its lock's there, 0 when it has neither) is still the one given; else they throw
/// `stale_revision` carrying the key at the scope as it is now, and change nothing. The check is
/// made inside the write's transaction, so of two writers with the same `ifRevision` one wins.
public protocol PreferencesService: Sendable {
    /// The effective value of `key` at `scope`, its source and, with `explain`, every layer.
    ///
    /// - Parameters:
    ///   - key: The key to resolve.
    ///   - scope: The scope to resolve it at.
    ///   - explain: Whether the answer lists every layer (``ResolvedPreference/chain``).
    /// - Returns: The key's effective value at `scope` and where it comes from (a key with no
    ///   value anywhere resolves to its schema's default, or to none).
    /// - Throws: ``PrefsError`` when the service cannot answer.
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference

    /// The effective value at `scope` of every key that has one there, optionally only keys
    /// starting with `prefix`, sorted by key.
    ///
    /// - Parameters:
    ///   - scope: The scope to resolve the keys at.
    ///   - prefix: Only keys starting with it, or nil for every key.
    /// - Returns: The resolved keys, sorted by key.
    /// - Throws: ``PrefsError`` when the service cannot answer.
    func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference]

    /// Sets `key` to `value` at `scope`, if the key is still at `ifRevision` there. When the value
    /// is already stored there, nothing changes (no revision, no change event) and the answer
    /// carries the current revision.
    ///
    /// - Parameters:
    ///   - key: The key to set.
    ///   - value: Its new value; it must fit the key's schema.
    ///   - scope: Where to set it.
    ///   - ifRevision: The key's revision at `scope` the write expects, or nil for whatever it is.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `locked` below a lock, `invalid_value` for a value the schema
    ///   refuses, `stale_revision` when the key is no longer at `ifRevision`.
    @discardableResult
    func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

    /// Removes `key`'s value at `scope`, and with `recursive` at every scope below it too. With
    /// no value removed, nothing changes and the answer carries the current revision.
    ///
    /// - Parameters:
    ///   - key: The key to reset.
    ///   - scope: Where to remove its value.
    ///   - recursive: Whether to remove its values at every scope below `scope` too.
    ///   - ifRevision: The key's revision at `scope` the write expects (scopes below are not
    ///     checked), or nil for whatever it is.
    /// - Returns: The revision of the change; its `removed` counts the values removed.
    /// - Throws: ``PrefsError`` — `locked` below a lock, `stale_revision` when the key is no
    ///   longer at `ifRevision`.
    @discardableResult
    func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult

    /// Applies every operation in one transaction: all of them, or none.
    ///
    /// - Parameter batch: The operations, applied in order.
    /// - Returns: The revision of the batch.
    /// - Throws: ``PrefsError`` for the first operation refused; then none is applied.
    @discardableResult
    func apply(_ batch: PreferenceBatch) async throws -> WriteResult

    /// Locks `key` at `scope`: it resolves to the lock scope's value there and everywhere below,
    /// and cannot be changed below it. Locking where a lock already is changes nothing, and the
    /// answer carries the current revision.
    ///
    /// - Parameters:
    ///   - key: The key to lock.
    ///   - scope: Where to lock it.
    ///   - ifRevision: The key's revision at `scope` the lock expects, so that the value locked is
    ///     the one the caller saw; nil for whatever it is.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `locked` below another lock, `stale_revision` when the key is
    ///   no longer at `ifRevision`.
    @discardableResult
    func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

    /// Removes the lock on `key` at `scope`. When there is no lock there, nothing changes and
    /// the answer carries the current revision.
    ///
    /// - Parameters:
    ///   - key: The key to unlock.
    ///   - scope: The scope of the lock.
    ///   - ifRevision: The key's revision at `scope` the write expects, or nil for whatever it is.
    /// - Returns: The revision of the change; its `removed` is 1, or 0 when there was no lock.
    /// - Throws: ``PrefsError`` — `stale_revision` when the key is no longer at `ifRevision`.
    @discardableResult
    func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

    /// Every registered schema, by key.
    func schemas() async throws -> [String: PreferenceSchema]

    /// Registers (or replaces) schemas.
    ///
    /// - Parameter schemas: The schemas, by key.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `invalid_schema` for a schema that is not valid, or when a
    ///   stored value breaks its new schema.
    @discardableResult
    func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult

    /// The values, locks and schemas of `scope`'s subtree.
    ///
    /// - Parameter scope: The top of the subtree.
    /// - Returns: The subtree's values, locks and schemas, ready for ``load(_:replacing:)``.
    /// - Throws: ``PrefsError`` when the service cannot answer.
    func dump(scope: ScopePath) async throws -> PrefsDump

    /// Loads a dump in one transaction: all of it, or none of it. It merges: values and locks
    /// the store holds and the dump does not stay — unless `replacing`, which first removes
    /// those of the dump's scope and below, so that this subtree ends up equal to the dump.
    /// The dump's schemas are registered either way; none is removed.
    ///
    /// - Parameters:
    ///   - dump: The dump to load.
    ///   - replacing: Whether to remove first the values and locks of the dump's scope and
    ///     below, so that the subtree ends up equal to the dump.
    /// - Returns: The revision of the load.
    /// - Throws: ``PrefsError`` for a value, lock or schema refused; then nothing is loaded.
    @discardableResult
    func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult
}

extension PreferencesService {
    /// ``resolve(_:scope:explain:)`` by a name not yet checked.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - scope: The scope to resolve it at.
    ///   - explain: Whether the answer lists every layer (``ResolvedPreference/chain``).
    /// - Returns: The key's effective value at `scope` and where it comes from.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``resolve(_:scope:explain:)`` does.
    public func resolve(_ key: String, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        try await resolve(KeyName(key), scope: scope, explain: explain)
    }

    /// The effective value of `key` at `scope`.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - scope: The scope to resolve it at (`/` by default).
    /// - Returns: The key's effective value at `scope` and where it comes from.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name.
    public func resolve(_ key: String, scope: ScopePath = .root) async throws -> ResolvedPreference {
        try await resolve(key, scope: scope, explain: false)
    }

    /// ``set(_:to:scope:ifRevision:)`` by a name not yet checked.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - value: Its new value; it must fit the key's schema.
    ///   - scope: Where to set it.
    ///   - ifRevision: The key's revision at `scope` the write expects; nil (the default) for
    ///     whatever it is.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``set(_:to:scope:ifRevision:)`` does.
    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath, ifRevision: Revision? = nil) async throws
        -> WriteResult
    {
        try await set(KeyName(key), to: value, scope: scope, ifRevision: ifRevision)
    }

    /// Sets `key` to `value` at `/`.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - value: Its new value; it must fit the key's schema.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``set(_:to:scope:ifRevision:)`` does.
    @discardableResult
    public func set(_ key: String, to value: JSONValue) async throws -> WriteResult {
        try await set(key, to: value, scope: .root)
    }

    /// ``reset(_:scope:recursive:ifRevision:)`` by a name not yet checked.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - scope: Where to remove its value.
    ///   - recursive: Whether to remove its values at every scope below `scope` too.
    ///   - ifRevision: The key's revision at `scope` the write expects; nil (the default) for
    ///     whatever it is.
    /// - Returns: The revision of the change; its `removed` counts the values removed.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``reset(_:scope:recursive:ifRevision:)`` does.
    @discardableResult
    public func reset(_ key: String, scope: ScopePath, recursive: Bool, ifRevision: Revision? = nil) async throws
        -> WriteResult
    {
        try await reset(KeyName(key), scope: scope, recursive: recursive, ifRevision: ifRevision)
    }

    /// ``lock(_:scope:ifRevision:)`` by a name not yet checked.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - scope: Where to lock it.
    ///   - ifRevision: The key's revision at `scope` the lock expects; nil (the default) for
    ///     whatever it is.
    /// - Returns: The revision of the change.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``lock(_:scope:ifRevision:)`` does.
    @discardableResult
    public func lock(_ key: String, scope: ScopePath, ifRevision: Revision? = nil) async throws -> WriteResult {
        try await lock(KeyName(key), scope: scope, ifRevision: ifRevision)
    }

    /// ``unlock(_:scope:ifRevision:)`` by a name not yet checked.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - scope: The scope of the lock.
    ///   - ifRevision: The key's revision at `scope` the write expects; nil (the default) for
    ///     whatever it is.
    /// - Returns: The revision of the change; its `removed` is 1, or 0 when there was no lock.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, or as
    ///   ``unlock(_:scope:ifRevision:)`` does.
    @discardableResult
    public func unlock(_ key: String, scope: ScopePath, ifRevision: Revision? = nil) async throws -> WriteResult {
        try await unlock(KeyName(key), scope: scope, ifRevision: ifRevision)
    }

    /// Loads a dump, merging it into what the store holds (``load(_:replacing:)``).
    ///
    /// - Parameter dump: The dump to load.
    /// - Returns: The revision of the load.
    /// - Throws: ``PrefsError`` for a value, lock or schema refused; then nothing is loaded.
    @discardableResult
    public func load(_ dump: PrefsDump) async throws -> WriteResult {
        try await load(dump, replacing: false)
    }

    /// The schema of one key.
    ///
    /// - Parameter key: The key's name.
    /// - Returns: Its registered schema.
    /// - Throws: ``PrefsError`` — `invalid_key` if `key` is not a key name, `not_found` if it has
    ///   no schema.
    public func schema(for key: String) async throws -> PreferenceSchema {
        _ = try KeyName(key)
        guard let schema = try await schemas()[key] else {
            throw PrefsError(.notFound, "'\(key)' has no schema.")
        }
        return schema
    }
}
