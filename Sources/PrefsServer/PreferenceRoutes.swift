import Hummingbird
import PrefsKit

/// The `/v1` routes for preferences, schemas, locks, dump/load and status, over any
/// ``PrefsService``. Thin: parse, call the service, encode.
struct PreferenceRoutes<Context: RequestContext>: Sendable {
    let service: any PrefsService
    let limits: ServerLimits

    func register(on router: Router<Context>) {
        router.get("/v1/status") { _, _ -> Response in
            .json(try await service.status())
        }

        router.get("/v1/prefs/{key}") { request, context -> Response in
            let resolved = try await service.resolve(try context.key(), scope: try request.scope(), explain: try request.flag("explain"))
            guard let json = resolved.compactWireJSON else { return .json(resolved) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
        }
        router.put("/v1/prefs/{key}") { request, context -> Response in
            let key = try context.key()
            let scope = try request.scope()
            var request = request
            let body = try await request.collectBody(upTo: limits.maximumPutBodyBytes)
            let value = try JSONValue(parsing: body.readableBytesView)
            return .json(try await service.set(key, to: value, scope: scope))
        }
        router.delete("/v1/prefs/{key}") { request, context -> Response in
            .json(try await service.reset(try context.key(), scope: try request.scope(), recursive: try request.flag("recursive")))
        }
        router.get("/v1/prefs") { request, _ -> Response in
            let scope = try request.scope()
            let preferences = try await service.list(scope: scope, prefix: request.uri.queryParameters.get("prefix"))
            return .json(PreferenceList(scope: scope, preferences: preferences))
        }
        router.post("/v1/prefs:batch") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: limits.maximumRequestBytes)
            let batch = try JSONCoding.decode(PreferenceBatch.self, from: body, what: "a batch ({\"operations\": [...]})")
            return .json(try await service.apply(batch))
        }

        router.put("/v1/locks/{key}") { request, context -> Response in
            .json(try await service.lock(try context.key(), scope: try request.scope()))
        }
        router.delete("/v1/locks/{key}") { request, context -> Response in
            .json(try await service.unlock(try context.key(), scope: try request.scope()))
        }

        router.get("/v1/schema") { _, _ -> Response in
            .json(SchemaList(schemas: try await service.schemas()))
        }
        router.get("/v1/schema/{key}") { _, context -> Response in
            .json(try await service.schema(for: try context.key()))
        }
        router.put("/v1/schema") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: limits.maximumRequestBytes)
            let schemas = try JSONCoding.decode(
                [String: PreferenceSchema].self, from: body, what: "an object of key → schema")
            return .json(try await service.register(schemas: schemas))
        }
        router.put("/v1/schema/{key}") { request, context -> Response in
            let key = try context.key()
            var request = request
            let body = try await request.collectBody(upTo: limits.maximumRequestBytes)
            let schema = try JSONCoding.decode(PreferenceSchema.self, from: body, what: "a schema")
            return .json(try await service.register(schemas: [key: schema]))
        }

        router.get("/v1/dump") { request, _ -> Response in
            .json(try await service.dump(scope: try request.scope()))
        }
        router.post("/v1/load") { request, _ -> Response in
            let replacing = try request.flag("replace")
            var request = request
            let body = try await request.collectBody(upTo: limits.maximumRequestBytes)
            let dump = try JSONCoding.decode(PrefsDump.self, from: body, what: "a dump (as GET /v1/dump answers)")
            return .json(try await service.load(dump, replacing: replacing))
        }
    }
}

/// The answer of `GET /v1/prefs`.
struct PreferenceList: Codable, Sendable {
    var scope: ScopePath
    var preferences: [ResolvedPreference]
}

/// The answer of `GET /v1/schema`.
struct SchemaList: Codable, Sendable {
    var schemas: [String: PreferenceSchema]
}

/// Request size limits.
public struct ServerLimits: Sendable {
    /// The largest preference value accepted (a `PUT /v1/prefs/{key}` body).
    public var maximumValueBytes: Int
    /// The largest body of other requests (batch, load, schema).
    public var maximumRequestBytes: Int

    public init(maximumValueBytes: Int = 64 * 1024, maximumRequestBytes: Int = 64 * 1024 * 1024) {
        self.maximumValueBytes = maximumValueBytes
        self.maximumRequestBytes = maximumRequestBytes
    }

    /// The largest `PUT /v1/prefs/{key}` body read: a value at the limit, with room for JSON
    /// spelling it differently from the canonical form the limit counts.
    var maximumPutBodyBytes: Int { maximumValueBytes + 1024 }
}
