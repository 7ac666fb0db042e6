import PrefsKit

extension PrefsEngine {
    @discardableResult
    package func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, context: WriteContext)
        async throws -> WriteResult
    {
        try await write(context, Self.setting(key, to: value, scope: scope, ifRevision: ifRevision))
    }

    package func set(
        _ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?, context: WriteContext,
        committingHere: Bool, then completion: @escaping @Sendable (Result<WriteResult, any Error>) -> Void
    ) {
        do {
            try ensureOpen()
        } catch {
            return completion(.failure(error))
        }
        writer.submit(
            Self.setting(key, to: value, scope: scope, ifRevision: ifRevision), context: recorded(context),
            leadingHere: committingHere, completion: completion)
    }

    /// The write request of a `set`.
    private static func setting(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?)
        -> @Sendable (WriteBatch) throws -> WriteResult
    {
        { batch in
            try batch.checkRevision(ifRevision, of: key, at: scope)
            return WriteResult(revision: try batch.setValue(key, to: value, scope: scope))
        }
    }

    @discardableResult
    package func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?, context: WriteContext)
        async throws -> WriteResult
    {
        try await write(context) { batch in
            try batch.checkRevision(ifRevision, of: key, at: scope)
            let removed = try batch.resetValue(key, scope: scope, recursive: recursive)
            return WriteResult(revision: batch.revision, removed: removed)
        }
    }

    @discardableResult
    package func apply(_ batch: PreferenceBatch, context: WriteContext) async throws -> WriteResult {
        try configuration.rules.checkBatch(batch)
        let keys = try batch.operations.map { try KeyName($0.key) }
        return try await write(context) { writing in
            let revisions = try zip(batch.operations, keys).map { try writing.apply($0, to: $1) }
            return WriteResult(revision: writing.revision, revisions: revisions)
        }
    }

    @discardableResult
    package func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?, context: WriteContext) async throws -> WriteResult {
        try await write(context) { batch in
            try batch.checkRevision(ifRevision, of: key, at: scope)
            try batch.lock(key, scope: scope)
            return WriteResult(revision: batch.revision)
        }
    }

    @discardableResult
    package func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?, context: WriteContext) async throws -> WriteResult {
        try await write(context) { batch in
            try batch.checkRevision(ifRevision, of: key, at: scope)
            let removed = try batch.unlock(key, scope: scope)
            return WriteResult(revision: batch.revision, removed: removed)
        }
    }

    @discardableResult
    package func register(schemas: [String: PreferenceSchema], context: WriteContext) async throws -> WriteResult {
        let named = try schemas.map { key, schema in
            let name = try KeyName(key)
            try schema.validateDefinition(for: key)
            return (key: name, schema: schema)
        }.sorted { $0.key < $1.key }
        return try await write(context) { batch in
            for (key, schema) in named { try batch.register(schema, for: key) }
            return WriteResult(revision: batch.revision)
        }
    }

    @discardableResult
    package func load(_ dump: PrefsDump, replacing: Bool, context: WriteContext) async throws -> WriteResult {
        try await write(context) { batch in
            try batch.load(dump, replacing: replacing)
            return WriteResult(revision: batch.revision)
        }
    }
}
