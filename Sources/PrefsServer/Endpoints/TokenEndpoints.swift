import HTTPTypes
import PrefsEngine
import PrefsKit

/// Named tokens: create, list, revoke — for admins, each within its own scope (an admin at
/// `/tenants/acme` manages the tokens at or below it). A created token's secret is in its
/// creation's answer only.
enum TokenEndpoints {
    /// The endpoints, answering from `engine` within `limits`.
    static func all(engine: any EngineServing, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/v1/tokens", role: .admin) { request in
                let grant = try request.access()
                return .task {
                    .json(TokenList(tokens: try await engine.tokens().filter { grant.covers($0.scope) }))
                }
            },
            Endpoint(.post, "/v1/tokens", body: .whole(limit: limits.maximumRequestBytes), role: .admin) { request in
                let token = try request.decodeBody(TokenRequest.self, what: "a token ({\"name\", \"role\", \"scope\"})")
                try request.checkAccess(.admin, at: token.scope)
                return .task {
                    .json(
                        try await engine.createToken(named: token.name, role: token.role, scope: token.scope, context: request.writeContext),
                        status: .created)
                }
            },
            Endpoint(.delete, "/v1/tokens/{name}", role: .admin) { request in
                let name = request.parameters["name"] ?? ""
                try AccessToken.checkName(name)
                if let token = engine.token(named: name) { try request.checkAccess(.admin, at: token.scope) }
                return .task { .json(try await engine.revokeToken(named: name, context: request.writeContext)) }
            },
        ]
    }
}
