import Foundation
import Logging
import PrefsKit
import Synchronization

/// Named tokens (``TokensService``): created and revoked through the group commit like every
/// change, so that the change log carries them to every host; checked from memory
/// (``AccessTokens``).
extension PrefsEngine {
    /// Creates a token. Under an `Idempotency-Key` it is created once, like any write; but its
    /// answer holds the secret, which is stored nowhere, so a repeat of a creation that committed
    /// (its answer lost) is refused with `conflict`, saying so, rather than answered without the
    /// secret.
    package func createToken(named name: String, role: AccessRole, scope: ScopePath, context: WriteContext) async throws
        -> CreatedAccessToken
    {
        try AccessToken.checkName(name)
        let (secret, digest) = AccessTokens.newSecret()
        let token = StoredToken(
            name: name, role: role, scope: scope, secretSHA256: digest.hex, createdAt: wallClock.now(),
            createdBy: recorded(context).origin.author?.name ?? configuration.author.name)
        let run = RunMark()
        let result = try await write(context) { batch in
            run.ran.store(true, ordering: .relaxed)
            return WriteResult(revision: try batch.createToken(token))
        }
        guard run.ran.load(ordering: .relaxed) else {
            throw PrefsError(
                .conflict,
                "This request already created token '\(name)' at revision \(result.revision), and its secret was in that answer only, which was lost. Revoke the token (prefsctl token revoke \(name)) and create it again."
            )
        }
        return CreatedAccessToken(token: token.description, secret: secret, revision: result.revision)
    }

    public func tokens() async throws -> [AccessToken] {
        let usedHere = Dictionary(tokens.all().map { ($0.name, $0.lastUsedAt) }, uniquingKeysWith: { first, _ in first })
        return try await storage.tokens().map { stored in
            var token = stored
            if let used = usedHere[stored.name] ?? nil { token.lastUsedAt = max(token.lastUsedAt ?? 0, used) }
            return token.description
        }.sorted { $0.name < $1.name }
    }

    @discardableResult
    package func revokeToken(named name: String, context: WriteContext) async throws -> WriteResult {
        try AccessToken.checkName(name)
        return try await write(context) { batch in WriteResult(revision: try batch.revokeToken(named: name)) }
    }

    /// What a request carrying `secret` (the bytes after `Bearer `) may do: nil if no token has
    /// it. From memory: no database round trip.
    package func grant(forSecret secret: [UInt8]) -> AccessGrant? {
        tokens.grant(forSecret: secret)
    }

    /// The named token `name`, as this engine has taken it in.
    package func token(named name: String) -> AccessToken? {
        tokens.token(named: name)?.description
    }

    /// Writes when tokens were last used, every `interval`, until cancelled.
    func recordTokenUse(every interval: Duration) -> Task<Void, Never> {
        Task { [tokens, storage, logger] in
            while (try? await Task.sleep(for: interval)) != nil {
                let uses = tokens.takeUses()
                guard !uses.isEmpty else { continue }
                do {
                    try await storage.recordTokenUse(uses)
                } catch {
                    logger.warning("Cannot record when tokens were last used: \(error)")
                }
            }
        }
    }
}

/// Whether a write's work ran for this request, rather than the outcome stored under its
/// `Idempotency-Key` being given again.
private final class RunMark: Sendable {
    let ran = Atomic<Bool>(false)
}
