import Foundation
import PrefsKit

/// A console session as `/ui/session` describes it: who it acts as and what it may do, and — in
/// the answer that opens it only — its secret.
struct ConsoleSessionInfo: Encodable, Sendable {
    /// What the console sends as `Authorization: Bearer SECRET`; only when the session opens.
    var secret: String?
    /// Whose it is: the token's name, or the daemon's user for a `prefsctl ui` link's.
    var name: String
    var role: AccessRole
    var scope: ScopePath
    /// When it ends; nil for a request that carries a token rather than a session's secret.
    var expiresAt: Date?

    /// A session just opened, with its secret.
    init(_ session: ConsoleSessions.Session, secret: String) {
        self.secret = secret
        name = Self.name(of: session.identity)
        role = session.role
        scope = session.scope
        expiresAt = session.expiresAt
    }

    /// What `caller` may do, in a session that ends at `expiresAt`.
    init(_ caller: Caller, expiresAt: Date?) {
        name = Self.name(of: caller.identity)
        role = caller.grant.role
        scope = caller.grant.scope
        self.expiresAt = expiresAt
    }

    /// Its token's name, or the daemon's user for the socket's owner.
    private static func name(of identity: Caller.Identity) -> String {
        identity.tokenName ?? ChangeAuthor.userName(uid: getuid())
    }
}
