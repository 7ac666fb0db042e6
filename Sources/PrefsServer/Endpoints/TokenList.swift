import PrefsKit

/// The answer of `GET /v1/tokens`.
struct TokenList: Codable, Sendable {
    var tokens: [AccessToken]
}
