import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The endpoints of preferences, schemas, locks, dump/load and status. Sets, resets, locks and
/// unlocks take the key's revision at the scope they are based on from `If-Match`; a key's read
/// gives it as its `ETag`.
///
/// Each declares the role it needs; reads and writes at a scope check the caller's grant reaches
/// it as they read the scope. An explanation shows a caller whose scope is below `/` the layers
/// above it without their values.
enum PreferenceEndpoints {
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/v1/status") { _ in
                .task { .json(try await engine.status()) }
            },
            Endpoint(.get, "/v1/prefs/{key}", cacheable: true) { request in
                let (key, scope, explain) = (try request.key(), try request.scope(), try request.flag("explain"))
                let grant = try request.access()
                if let revision = try request.integer("atRevision") {
                    return .task {
                        .json(grant.redacting(try await engine.resolve(key, scope: scope, explain: explain, atRevision: revision)))
                    }
                }
                var (resolved, revisionHere) = engine.resolveNowWithRevision(key, scope: scope, explain: explain)
                if explain { resolved = grant.redacting(resolved) }
                var answer = resolved.compactWireJSON.map { Answer.json(ByteBuffer(string: $0)) } ?? .json(resolved)
                answer.fields.append(HTTPField(name: .eTag, value: "\"\(revisionHere)\""))
                return .now(answer)
            },
            Endpoint(.put, "/v1/prefs/{key}", body: .whole(limit: limits.maximumPutBodyBytes), role: .writer) { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                let value = try JSONValue(parsing: (request.body ?? ByteBuffer()).readableBytesView)
                let (commitsHere, context) = (request.commitsHere, request.writeContext)
                return .later { finish in
                    engine.set(
                        key, to: value, scope: scope, ifRevision: ifRevision, context: context, committingHere: commitsHere
                    ) { result in
                        finish(result.map(Answer.json))
                    }
                }
            },
            Endpoint(.delete, "/v1/prefs/{key}", role: .writer) { request in
                let (key, scope, recursive) = (try request.key(), try request.scope(), try request.flag("recursive"))
                let (ifRevision, context) = (try request.ifRevision(), request.writeContext)
                return .task {
                    .json(try await engine.reset(key, scope: scope, recursive: recursive, ifRevision: ifRevision, context: context))
                }
            },
            Endpoint(.get, "/v1/prefs") { request in
                let (scope, prefix, revision) = (try request.scope(), request.query["prefix"], try request.integer("atRevision"))
                return .task {
                    let preferences =
                        if let revision {
                            try await engine.list(scope: scope, prefix: prefix, atRevision: revision)
                        } else {
                            try await engine.list(scope: scope, prefix: prefix)
                        }
                    return .json(PreferenceList(scope: scope, preferences: preferences))
                }
            },
            Endpoint(.post, "/v1/prefs:batch", body: .whole(limit: limits.maximumRequestBytes), role: .writer) { request in
                let batch = try request.decodeBody(PreferenceBatch.self, what: "a batch ({\"operations\": [...]})")
                for operation in batch.operations { try request.checkAccess(.writer, at: operation.scope) }
                let context = request.writeContext
                return .task { .json(try await engine.apply(batch, context: context)) }
            },
            Endpoint(.put, "/v1/locks/{key}", role: .admin) { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                let context = request.writeContext
                return .task { .json(try await engine.lock(key, scope: scope, ifRevision: ifRevision, context: context)) }
            },
            Endpoint(.delete, "/v1/locks/{key}", role: .admin) { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                let context = request.writeContext
                return .task { .json(try await engine.unlock(key, scope: scope, ifRevision: ifRevision, context: context)) }
            },
            Endpoint(.get, "/v1/schema") { _ in
                .task { .json(SchemaList(schemas: try await engine.schemas())) }
            },
            Endpoint(.get, "/v1/schema/{key}") { request in
                let key = try request.key()
                return .task { .json(try await engine.schema(for: key.rawValue)) }
            },
            Endpoint(.put, "/v1/schema", body: .whole(limit: limits.maximumRequestBytes), role: .admin, storeWide: true) { request in
                let schemas = try request.decodeBody([String: PreferenceSchema].self, what: "an object of key → schema")
                let context = request.writeContext
                return .task { .json(try await engine.register(schemas: schemas, context: context)) }
            },
            Endpoint(.put, "/v1/schema/{key}", body: .whole(limit: limits.maximumRequestBytes), role: .admin, storeWide: true) {
                request in
                let key = try request.key()
                let schema = try request.decodeBody(PreferenceSchema.self, what: "a schema")
                let context = request.writeContext
                return .task { .json(try await engine.register(schemas: [key.rawValue: schema], context: context)) }
            },
            Endpoint(.get, "/v1/dump") { request in
                let (scope, revision) = (try request.scope(), try request.integer("atRevision"))
                return .task {
                    guard let revision else { return .json(try await engine.dump(scope: scope)) }
                    return .json(try await engine.dump(scope: scope, atRevision: revision))
                }
            },
            Endpoint(.post, "/v1/load", body: .whole(limit: limits.maximumRequestBytes), role: .writer) { request in
                let replacing = try request.flag("replace")
                let dump = try request.decodeBody(PrefsDump.self, what: "a dump (as GET /v1/dump answers)")
                try request.checkAccess(replacing ? .admin : .writer, at: dump.scope)
                for value in dump.values { try request.checkAccess(.writer, at: value.scope) }
                for lock in dump.locks { try request.checkAccess(.admin, at: lock.scope) }
                return .task {
                    // A dump carries every schema: loading it asks for no more than writing, unless
                    // it changes one.
                    if !dump.schemas.isEmpty, try !request.access().coversEverything {
                        let current = try await engine.schemas()
                        if dump.schemas.contains(where: { current[$0.key] != $0.value }) { try request.checkAccess(.admin, at: .root) }
                    }
                    return .json(try await engine.load(dump, replacing: replacing, context: request.writeContext))
                }
            },
        ]
    }
}
