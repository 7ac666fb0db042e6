import HTTPTypes
import PrefsEngine
import PrefsKit

/// How a listener finds out who each of its requests comes from and what it may do (``Caller``).
enum ListenerAccess: Sendable {
    /// The Unix socket: only connections of the daemon's own user get this far
    /// (``PeerCredentialsHandler``), and the owner is an admin at `/`.
    case owner
    /// The TCP listener: every request carries a bearer token — the file token
    /// (`prefsd --token-file`, an admin at `/` named ``AccessToken/fileTokenName``), a named
    /// token's secret, looked up in memory (``EngineServing/grant(forSecret:)``), or the secret of
    /// a console session (``ConsoleSessions``).
    case bearer(fileToken: BearerToken?, sessions: ConsoleSessions)

    /// Who sent `request`; nil if it carries no token this listener accepts.
    func caller(of request: EndpointRequest, engine: any EngineServing) -> Caller? {
        guard case .bearer(_, let sessions) = self else { return .owner }
        guard let credentials = BearerToken.credentials(request.headers[.authorization]) else { return nil }
        if ConsoleSessions.isSessionSecret(credentials) { return sessions.caller(forSecret: credentials, engine: engine) }
        return tokenHolder(presenting: credentials, engine: engine)
    }

    /// Who holds the token `credentials` — the file token or a named token; nil for none this
    /// listener accepts (a console session's secret is not a token).
    func tokenHolder(presenting credentials: [UInt8], engine: any EngineServing) -> Caller? {
        guard case .bearer(let fileToken, _) = self else { return nil }
        if let fileToken, fileToken.matches(credentials) { return .fileToken }
        guard let grant = engine.grant(forSecret: credentials), let name = grant.token else { return nil }
        return Caller(identity: .namedToken(name: name, secret: credentials), grant: grant)
    }

    /// The answer of a request without a token this listener accepts. It says what to send, never
    /// what was sent.
    static let unauthorized = PrefsError(
        .unauthorized,
        "This listener needs a token: send Authorization: Bearer TOKEN, with the token of prefsd --token-file or a secret from prefsctl token create."
    )
}
