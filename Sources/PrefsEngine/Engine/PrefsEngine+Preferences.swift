import PrefsKit

extension PrefsEngine {
    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws
        -> WriteResult
    {
        try KeyName.validate(key)
        return try await write(Self.setting(key, to: value, scope: scope, ifRevision: ifRevision))
    }

    package func set(
        _ key: String, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, committingHere: Bool,
        then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void
    ) {
        do {
            try KeyName.validate(key)
            try ensureOpen()
        } catch {
            return completion(.failure(error))
        }
        writer.submit(Self.setting(key, to: value, scope: scope, ifRevision: ifRevision), leadingHere: committingHere, completion: completion)
    }

    /// The write request of a `set`.
    private static func setting(_ key: String, to value: JSONValue, scope: ScopePath, ifRevision: Revision?)
        -> @Sendable (WriteBatch) throws -> WriteResult
    {
        { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            return WriteResult(revision: try context.setValue(key, to: value, scope: scope))
        }
    }

    @discardableResult
    public func reset(_ key: String, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult {
        try KeyName.validate(key)
        return try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            let removed = try context.resetValue(key, scope: scope, recursive: recursive)
            return WriteResult(revision: context.revision, removed: removed)
        }
    }

    @discardableResult
    public func apply(_ batch: PreferenceBatch) async throws -> WriteResult {
        try configuration.rules.checkBatch(batch)
        for operation in batch.operations { try KeyName.validate(operation.key) }
        return try await write { context in
            let revisions = try batch.operations.map { try context.apply($0) }
            return WriteResult(revision: context.revision, revisions: revisions)
        }
    }

    @discardableResult
    public func lock(_ key: String, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try KeyName.validate(key)
        return try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            try context.lock(key, scope: scope)
            return WriteResult(revision: context.revision)
        }
    }

    @discardableResult
    public func unlock(_ key: String, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try KeyName.validate(key)
        return try await write { context in
            try context.checkRevision(ifRevision, of: key, at: scope)
            let removed = try context.unlock(key, scope: scope)
            return WriteResult(revision: context.revision, removed: removed)
        }
    }

    @discardableResult
    public func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult {
        for (key, schema) in schemas {
            try KeyName.validate(key)
            try schema.validateDefinition(for: key)
        }
        return try await write { context in
            for (key, schema) in schemas.sorted(by: { $0.key < $1.key }) { try context.register(schema, for: key) }
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
