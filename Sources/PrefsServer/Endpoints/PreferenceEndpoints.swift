import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The endpoints of preferences, schemas, locks, dump/load and status. Sets, resets, locks and
/// unlocks take the key's revision at the scope they are based on from `If-Match`; a key's read
/// gives it as its `ETag`.
enum PreferenceEndpoints {
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/v1/status") { _ in
                .task { .json(try await engine.status()) }
            },
            Endpoint(.get, "/v1/prefs/{key}", cacheable: true) { request in
                let (resolved, revisionHere) = engine.resolveNowWithRevision(
                    try request.key(), scope: try request.scope(), explain: try request.flag("explain"))
                var answer = resolved.compactWireJSON.map { Answer.json(ByteBuffer(string: $0)) } ?? .json(resolved)
                answer.fields.append(HTTPField(name: .eTag, value: "\"\(revisionHere)\""))
                return .now(answer)
            },
            Endpoint(.put, "/v1/prefs/{key}", body: .whole(limit: limits.maximumPutBodyBytes)) { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                let value = try JSONValue(parsing: (request.body ?? ByteBuffer()).readableBytesView)
                let (commitsHere, idempotency) = (request.commitsHere, IdempotentRequest.current)
                return .later { finish in
                    engine.set(
                        key, to: value, scope: scope, ifRevision: ifRevision, idempotency: idempotency, committingHere: commitsHere
                    ) { result in
                        finish(result.map(Answer.json))
                    }
                }
            },
            Endpoint(.delete, "/v1/prefs/{key}") { request in
                let (key, scope, recursive) = (try request.key(), try request.scope(), try request.flag("recursive"))
                let ifRevision = try request.ifRevision()
                return .task { .json(try await engine.reset(key, scope: scope, recursive: recursive, ifRevision: ifRevision)) }
            },
            Endpoint(.get, "/v1/prefs") { request in
                let (scope, prefix) = (try request.scope(), request.query["prefix"])
                return .task { .json(PreferenceList(scope: scope, preferences: try await engine.list(scope: scope, prefix: prefix))) }
            },
            Endpoint(.post, "/v1/prefs:batch", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let batch = try request.decodeBody(PreferenceBatch.self, what: "a batch ({\"operations\": [...]})")
                return .task { .json(try await engine.apply(batch)) }
            },
            Endpoint(.put, "/v1/locks/{key}") { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                return .task { .json(try await engine.lock(key, scope: scope, ifRevision: ifRevision)) }
            },
            Endpoint(.delete, "/v1/locks/{key}") { request in
                let (key, scope, ifRevision) = (try request.key(), try request.scope(), try request.ifRevision())
                return .task { .json(try await engine.unlock(key, scope: scope, ifRevision: ifRevision)) }
            },
            Endpoint(.get, "/v1/schema") { _ in
                .task { .json(SchemaList(schemas: try await engine.schemas())) }
            },
            Endpoint(.get, "/v1/schema/{key}") { request in
                let key = try request.key()
                return .task { .json(try await engine.schema(for: key.rawValue)) }
            },
            Endpoint(.put, "/v1/schema", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let schemas = try request.decodeBody([String: PreferenceSchema].self, what: "an object of key → schema")
                return .task { .json(try await engine.register(schemas: schemas)) }
            },
            Endpoint(.put, "/v1/schema/{key}", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let key = try request.key()
                let schema = try request.decodeBody(PreferenceSchema.self, what: "a schema")
                return .task { .json(try await engine.register(schemas: [key.rawValue: schema])) }
            },
            Endpoint(.get, "/v1/dump") { request in
                let scope = try request.scope()
                return .task { .json(try await engine.dump(scope: scope)) }
            },
            Endpoint(.post, "/v1/load", body: .whole(limit: limits.maximumRequestBytes)) { request in
                let replacing = try request.flag("replace")
                let dump = try request.decodeBody(PrefsDump.self, what: "a dump (as GET /v1/dump answers)")
                return .task { .json(try await engine.load(dump, replacing: replacing)) }
            },
        ]
    }
}
