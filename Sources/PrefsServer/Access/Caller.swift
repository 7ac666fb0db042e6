import PrefsKit

/// Who a request comes from, as its listener found out, and what it may do.
struct Caller: Sendable {
    /// Whose credentials the request carries.
    enum Identity: Sendable, Equatable {
        /// The Unix socket's owner — or a console session a `prefsctl ui` link on the socket opened.
        case owner
        /// The token of `prefsd --token-file`.
        case fileToken
        /// A named token, with the secret it was presented with: a console session signed in with
        /// it asks for its grant again with each request, so revoking the token ends the session.
        case namedToken(name: String, secret: [UInt8])

        /// The name of its token, as the audit log (`token:NAME`) and the metrics name it; nil for
        /// the socket's owner, whose changes are by the daemon's user.
        var tokenName: String? {
            switch self {
            case .owner: nil
            case .fileToken: AccessToken.fileTokenName
            case .namedToken(let name, _): name
            }
        }
    }

    /// Whose credentials.
    var identity: Identity
    /// What it may do.
    var grant: AccessGrant

    /// The socket's owner: an admin at `/`.
    static let owner = Caller(identity: .owner, grant: .everything)
    /// The file token: an admin at `/`.
    static let fileToken = Caller(identity: .fileToken, grant: .everything)

    /// The name of its token (``Identity/tokenName``).
    var tokenName: String? { identity.tokenName }
}
