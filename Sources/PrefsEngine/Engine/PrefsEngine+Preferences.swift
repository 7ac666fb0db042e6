import PrefsKit

extension PrefsEngine {
    @discardableResult
    public func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws
        -> WriteResult
    {
        try await write(Self.setting(key, to: value, scope: scope, ifRevision: ifRevision))
    }

    package func set(
        _ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, idempotency: IdempotentRequest?,
        origin: ChangeOrigin?, committingHere: Bool, then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void
    ) {
        do {
            try ensureOpen()
        } catch {
            return completion(.failure(error))
        }
        writer.submit(
            Self.setting(key, to: value, scope: scope, ifRevision: ifRevision), idempotency: idempotency,
            origin: self.origin(origin), leadingHere: committingHere, completion: completion)
    }

    /// The write request of a `set`.
    private static func setting(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?)
        -> @Sendable (WriteBatch) throws -> WriteResult
    {
        { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            return WriteResult(revision: try context.setValue(key, to: value, scope: scope))
        }
    }

    @discardableResult
    public func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult {
        try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            let removed = try context.resetValue(key, scope: scope, recursive: recursive)
            return WriteResult(revision: context.revision, removed: removed)
        }
    }

    @discardableResult
    public func apply(_ batch: PreferenceBatch) async throws -> WriteResult {
        try configuration.rules.checkBatch(batch)
        let keys = try batch.operations.map { try KeyName($0.key) }
        return try await write { context in
            let revisions = try zip(batch.operations, keys).map { try context.apply($0, to: $1) }
            return WriteResult(revision: context.revision, revisions: revisions)
        }
    }

    @discardableResult
    public func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            try context.lock(key, scope: scope)
            return WriteResult(revision: context.revision)
        }
    }

    @discardableResult
    public func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            let removed = try context.unlock(key, scope: scope)
            return WriteResult(revision: context.revision, removed: removed)
        }
    }

    @discardableResult
    public func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult {
        let named = try schemas.map { key, schema in
            let name = try KeyName(key)
            try schema.validateDefinition(for: key)
            return (key: name, schema: schema)
        }.sorted { $0.key < $1.key }
        return try await write { context in
            for (key, schema) in named { try context.register(schema, for: key) }
            return WriteResult(revision: context.revision)
        }
    }

    @discardableResult
    public func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult {
        try await write { context in
            try context.load(dump, replacing: replacing)
            return WriteResult(revision: context.revision)
        }
    }
}
