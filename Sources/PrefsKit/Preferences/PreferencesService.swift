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
    func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference

    /// The effective value at `scope` of every key that has one there, optionally only keys
    /// starting with `prefix`, sorted by key.
    func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference]

    /// Sets `key` to `value` at `scope`, if the key is still at `ifRevision` there (nil: whatever
    /// its revision). When the value is already stored there, nothing changes (no revision, no
    /// change event) and the answer carries the current revision.
    @discardableResult
    func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

    /// Removes `key`'s value at `scope`, and with `recursive` at every scope below it too. The
    /// answer's `removed` counts the values removed; with none, nothing changes and the answer
    /// carries the current revision. With `ifRevision`, only if the key is still at that revision
    /// at `scope` (scopes below are not checked).
    @discardableResult
    func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult

    /// Applies every operation in one transaction: all of them, or none.
    @discardableResult
    func apply(_ batch: PreferenceBatch) async throws -> WriteResult

    /// Locks `key` at `scope`: it resolves to the lock scope's value there and everywhere below,
    /// and cannot be changed below it. Locking where a lock already is changes nothing, and the
    /// answer carries the current revision. With `ifRevision`, only if the key is still at that
    /// revision at `scope`: the value locked is the one the caller saw.
    @discardableResult
    func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

    /// Removes the lock on `key` at `scope`. The answer's `removed` is 1, or 0 when there was no
    /// lock there: then nothing changes and the answer carries the current revision. With
    /// `ifRevision`, only if the key is still at that revision at `scope`.
    @discardableResult
    func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult

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

    /// The effective value of `key` at `scope` (default `/`).
    public func resolve(_ key: String, scope: ScopePath = .root) async throws -> ResolvedPreference {
        try await resolve(key, scope: scope, explain: false)
    }

    /// ``set(_:to:scope:ifRevision:)`` by a name not yet checked: `invalid_key` if it is not a
    /// key name. Without `ifRevision`, whatever the key's revision there.
    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath, ifRevision: Revision? = nil) async throws
        -> WriteResult
    {
        try await set(KeyName(key), to: value, scope: scope, ifRevision: ifRevision)
    }

    /// Sets `key` to `value` at `/`.
    @discardableResult
    public func set(_ key: String, to value: JSONValue) async throws -> WriteResult {
        try await set(key, to: value, scope: .root)
    }

    /// ``reset(_:scope:recursive:ifRevision:)`` by a name not yet checked: `invalid_key` if it is
    /// not a key name. Without `ifRevision`, whatever the key's revision there.
    @discardableResult
    public func reset(_ key: String, scope: ScopePath, recursive: Bool, ifRevision: Revision? = nil) async throws
        -> WriteResult
    {
        try await reset(KeyName(key), scope: scope, recursive: recursive, ifRevision: ifRevision)
    }

    /// ``lock(_:scope:ifRevision:)`` by a name not yet checked: `invalid_key` if it is not a key
    /// name. Without `ifRevision`, whatever the key's revision there.
    @discardableResult
    public func lock(_ key: String, scope: ScopePath, ifRevision: Revision? = nil) async throws -> WriteResult {
        try await lock(KeyName(key), scope: scope, ifRevision: ifRevision)
    }

    /// ``unlock(_:scope:ifRevision:)`` by a name not yet checked: `invalid_key` if it is not a
    /// key name. Without `ifRevision`, whatever the key's revision there.
    @discardableResult
    public func unlock(_ key: String, scope: ScopePath, ifRevision: Revision? = nil) async throws -> WriteResult {
        try await unlock(KeyName(key), scope: scope, ifRevision: ifRevision)
    }

    /// Loads a dump, merging it into what the store holds (``load(_:replacing:)``).
    @discardableResult
    public func load(_ dump: PrefsDump) async throws -> WriteResult {
        try await load(dump, replacing: false)
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
