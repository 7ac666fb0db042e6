import HTTPTypes
import PrefsEngine
import PrefsKit

/// How a listener finds out what each of its requests may do (``AccessGrant``), and whom its
/// changes are by.
enum ListenerAccess: Sendable {
    /// The Unix socket: only connections of the daemon's own user get this far
    /// (``PeerCredentialsHandler``), and the owner is an admin at `/`.
    case owner
    /// The TCP listener: every request carries a bearer token — the file token
    /// (`prefsd --token-file`, an admin at `/` named ``AccessToken/fileTokenName``), or a named
    /// token's secret, looked up in memory (``EngineServing/grant(forSecret:)``).
    case bearer(fileToken: BearerToken?)

    /// What `request` may do; nil if it carries no token this listener accepts.
    func grant(of request: EndpointRequest, engine: any EngineServing) -> AccessGrant? {
        guard case .bearer(let fileToken) = self else { return .everything }
        guard let credentials = BearerToken.credentials(request.headers[.authorization]) else { return nil }
        if let fileToken, fileToken.matches(credentials) { return .everything }
        return engine.grant(forSecret: credentials)
    }

    /// The name of the token `grant` came from, as the metrics and authors name it; nil on the
    /// socket.
    func tokenName(of grant: AccessGrant) -> String? {
        guard case .bearer = self else { return nil }
        return grant.token ?? AccessToken.fileTokenName
    }

    /// The answer of a request without a token this listener accepts. It says what to send, never
    /// what was sent.
    static let unauthorized = PrefsError(
        .unauthorized,
        "This listener needs a token: send Authorization: Bearer TOKEN, with the token of prefsd --token-file or a secret from prefsctl token create."
    )
}
