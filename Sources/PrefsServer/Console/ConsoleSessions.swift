import Foundation
import PrefsEngine
import PrefsKit
import Synchronization

/// The console's sign-in codes and sessions, in this daemon's memory: a `prefsctl ui` link's code
/// works once and for ``codeLifetime``; a session lasts ``sessionLifetime`` or until it signs out
/// — or until the token it was opened with is revoked. A restarted daemon has none: the console
/// asks to sign in again.
///
/// Codes and secrets are kept by their SHA-256 (``SecretDigest``), so what a lookup takes says
/// nothing about them.
final class ConsoleSessions: Sendable {
    /// How long a link's code can be traded for a session.
    static let codeLifetime = Duration.seconds(120)
    /// How long a session lasts.
    static let sessionLifetime = Duration.seconds(12 * 3600)
    /// What every session's secret starts with, so a request's credentials go straight to the
    /// sessions rather than to the tokens.
    static let secretPrefix = "console_"

    /// A session, or the one a code opens: whose credentials it acts with, and narrowed to what.
    struct Session: Sendable {
        /// Whose credentials.
        var identity: Caller.Identity
        /// At most this role.
        var role: AccessRole
        /// At most this scope (at or below the identity's own).
        var scope: ScopePath
        /// When it ends.
        var expires: ContinuousClock.Instant
        /// When it ends, as the console shows it.
        var expiresAt: Date
    }

    private struct State {
        var codes: [SecretDigest: Session] = [:]
        var sessions: [SecretDigest: Session] = [:]
    }

    private let state = Mutex(State())

    /// Whether `credentials` look like a session's secret (they may still be no session's).
    static func isSessionSecret(_ credentials: [UInt8]) -> Bool {
        credentials.starts(with: secretPrefix.utf8)
    }

    /// A new code that opens a session for `caller`, narrowed to `role` at `scope`.
    func makeCode(for caller: Caller, role: AccessRole, scope: ScopePath, now: ContinuousClock.Instant = .now) -> (
        code: String, expiresAt: Date
    ) {
        let code = SecretDigest.newSecret(prefix: "")
        let expiresAt = Date() + Self.seconds(Self.codeLifetime)
        let session = Session(identity: caller.identity, role: role, scope: scope, expires: now + Self.codeLifetime, expiresAt: expiresAt)
        state.withLock { state in
            state.codes = state.codes.filter { $0.value.expires > now }
            state.codes[SecretDigest(of: Array(code.utf8))] = session
        }
        return (code, expiresAt)
    }

    /// Trades `code` for a session: its secret and the session; nil for a code that is unknown,
    /// used or expired.
    func signIn(code: String, now: ContinuousClock.Instant = .now) -> (secret: String, session: Session)? {
        let digest = SecretDigest(of: Array(code.utf8))
        guard let pending = state.withLock({ $0.codes.removeValue(forKey: digest) }), pending.expires > now else { return nil }
        return open(identity: pending.identity, role: pending.role, scope: pending.scope, now: now)
    }

    /// Opens a session for `caller`: its secret and the session.
    func signIn(_ caller: Caller, now: ContinuousClock.Instant = .now) -> (secret: String, session: Session) {
        open(identity: caller.identity, role: caller.grant.role, scope: caller.grant.scope, now: now)
    }

    /// The caller whose secret `credentials` is: the session's identity, with what it may do now
    /// — its token's grant as the engine has it, narrowed to the session's role and scope; nil for
    /// no session, an expired one, or one whose token was revoked.
    func caller(forSecret credentials: [UInt8], engine: any EngineServing, now: ContinuousClock.Instant = .now) -> Caller? {
        guard let session = session(forSecret: credentials, now: now) else { return nil }
        let grant: AccessGrant
        switch session.identity {
        case .owner, .fileToken: grant = .everything
        case .namedToken(_, let secret):
            guard let current = engine.grant(forSecret: secret) else { return nil }
            grant = current
        }
        let narrowed = AccessGrant(
            token: grant.token, role: min(grant.role, session.role),
            scope: grant.scope.contains(session.scope) ? session.scope : grant.scope)
        return Caller(identity: session.identity, grant: narrowed)
    }

    /// The session whose secret `credentials` is, while it lasts.
    func session(forSecret credentials: [UInt8], now: ContinuousClock.Instant = .now) -> Session? {
        let digest = SecretDigest(of: credentials)
        return state.withLock { state in
            guard let session = state.sessions[digest] else { return nil }
            guard session.expires > now else {
                state.sessions[digest] = nil
                return nil
            }
            return session
        }
    }

    /// Ends the session whose secret `credentials` is.
    func signOut(secret credentials: [UInt8]) {
        _ = state.withLock { $0.sessions.removeValue(forKey: SecretDigest(of: credentials)) }
    }

    private func open(identity: Caller.Identity, role: AccessRole, scope: ScopePath, now: ContinuousClock.Instant) -> (
        secret: String, session: Session
    ) {
        let secret = SecretDigest.newSecret(prefix: Self.secretPrefix)
        let session = Session(
            identity: identity, role: role, scope: scope, expires: now + Self.sessionLifetime,
            expiresAt: Date() + Self.seconds(Self.sessionLifetime))
        state.withLock { state in
            state.sessions = state.sessions.filter { $0.value.expires > now }
            state.sessions[SecretDigest(of: Array(secret.utf8))] = session
        }
        return (secret, session)
    }


    private static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.components.seconds)
    }
}
