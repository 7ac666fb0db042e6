import Foundation
import PrefsKit

/// Named tokens, over the daemon's API (`/v1/tokens`).
extension PrefsClient {
    public func createToken(named name: String, role: AccessRole, scope: ScopePath) async throws -> CreatedAccessToken {
        try AccessToken.checkName(name)
        let request = TokenRequest(name: name, role: role, scope: scope)
        return try await call("POST", "/v1/tokens", body: try Self.encoder.encode(request))
    }

    public func tokens() async throws -> [AccessToken] {
        struct Answer: Decodable { var tokens: [AccessToken] }
        let answer: Answer = try await call("GET", "/v1/tokens")
        return answer.tokens
    }

    @discardableResult
    public func revokeToken(named name: String) async throws -> WriteResult {
        try AccessToken.checkName(name)
        return try await call("DELETE", "/v1/tokens/\(name)")
    }
}
