#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import PrefsKit
import Synchronization

/// The named tokens, in memory, as of the newest revision the engine has taken in: every request
/// on the TCP listener is checked here, with no database round trip. They come from the storage
/// when the engine opens, then from the change log — the engine's own `token.created` and
/// `token.revoked` changes and other hosts', in revision order (``ChangeIntake``) — so a token
/// revoked at revision R is refused on every host that has taken in R.
///
/// When each token was last used is kept here too, and written to the storage now and then
/// (``takeUses()``), not at every request.
final class AccessTokens: Sendable {
    private struct Entry {
        var token: StoredToken
        var grant: AccessGrant
        /// When a request last carried it here, in whole seconds since 1970; nil if none has
        /// since it was last written to the storage.
        var usedAt: Int64?
    }

    /// The tokens by their secrets' digests (what a request is checked against: one lookup), and
    /// the digests by name.
    private struct State {
        var entries: [SecretDigest: Entry] = [:]
        var digests: [String: SecretDigest] = [:]
    }

    private let state = Mutex(State())

    /// The tokens `tokens`.
    init(_ tokens: [StoredToken]) {
        for token in tokens { add(token) }
    }

    /// Prefix of every secret, so that a secret scanner (or a reader) tells what it is.
    static let secretPrefix = "prefsd_"

    /// A new secret: 32 random bytes in base64url after ``secretPrefix``, and its digest.
    static func newSecret() -> (secret: String, digest: SecretDigest) {
        let secret = SecretDigest.newSecret(prefix: secretPrefix)
        return (secret, SecretDigest(of: Array(secret.utf8)))
    }

    /// The grant of the token whose secret is `secret`, noting that it was used; nil if no token
    /// has it.
    func grant(forSecret secret: [UInt8]) -> AccessGrant? {
        let digest = SecretDigest(of: secret)
        let now = Int64(time(nil))
        return state.withLock { state in
            // Through the index, the entry is read and marked in place, never copied.
            guard let index = state.entries.index(forKey: digest) else { return nil }
            if state.entries.values[index].usedAt != now { state.entries.values[index].usedAt = now }
            return state.entries.values[index].grant
        }
    }

    /// The token named `name`, if there is one.
    func token(named name: String) -> StoredToken? {
        state.withLock { state in state.digests[name].flatMap { state.entries[$0]?.token } }
    }

    /// Every token, with when each was last used here if that is newer than the storage says.
    func all() -> [StoredToken] {
        state.withLock { state in
            state.entries.values.map { entry in
                var token = entry.token
                if let usedAt = entry.usedAt { token.lastUsedAt = max(token.lastUsedAt ?? 0, Double(usedAt)) }
                return token
            }
        }
    }

    /// When each token used since the last call was last used, to write to the storage; they are
    /// taken as written.
    func takeUses() -> [String: Double] {
        state.withLock { state in
            var uses: [String: Double] = [:]
            for index in state.entries.indices {
                guard let usedAt = state.entries.values[index].usedAt else { continue }
                uses[state.entries.values[index].token.name] = Double(usedAt)
                state.entries.values[index].token.lastUsedAt = max(state.entries.values[index].token.lastUsedAt ?? 0, Double(usedAt))
                state.entries.values[index].usedAt = nil
            }
            return uses
        }
    }

    /// Takes in a committed token change: a created token is known from now on, a revoked one
    /// refused. Returns the name of the token revoked, if that is what it was.
    func take(_ event: ChangeEvent, time: Double) -> String? {
        switch event.kind {
        case .tokenCreated:
            if let token = StoredToken(created: event, time: time) { add(token) }
            return nil
        case .tokenRevoked:
            guard case .object(let fields)? = event.value, case .string(let name)? = fields["name"] else { return nil }
            state.withLock { state in
                guard let digest = state.digests.removeValue(forKey: name) else { return }
                state.entries[digest] = nil
            }
            return name
        default:
            return nil
        }
    }

    private func add(_ token: StoredToken) {
        guard let digest = SecretDigest(hex: token.secretSHA256) else { return }
        state.withLock { state in
            if let replaced = state.digests[token.name] { state.entries[replaced] = nil }
            state.entries[digest] = Entry(token: token, grant: AccessGrant(token: token.name, role: token.role, scope: token.scope))
            state.digests[token.name] = digest
        }
    }
}
