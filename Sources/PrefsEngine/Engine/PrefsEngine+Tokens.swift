import Logging
import PrefsKit

/// Named tokens (``TokensService``): created and revoked through the group commit like every
/// change, so that the change log carries them to every host; checked from memory
/// (``AccessTokens``).
extension PrefsEngine {
    /// Creates a token. Its creation is not replayed under an `Idempotency-Key`: its answer holds
    /// the secret, which is stored nowhere, so a repeat finds the name taken (`conflict`) rather
    /// than a stored answer.
    public func createToken(named name: String, role: AccessRole, scope: ScopePath) async throws -> CreatedAccessToken {
        try AccessToken.checkName(name)
        let (secret, digest) = AccessTokens.newSecret()
        let request = StoredToken(
            name: name, role: role, scope: scope, secretSHA256: digest.hex, createdAt: 0, createdBy: configuration.author.name)
        let (token, revision) = try await IdempotentRequest.$current.withValue(nil) {
            try await write { batch in try batch.createToken(request) }
        }
        return CreatedAccessToken(token: token.description, secret: secret, revision: revision)
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
    public func revokeToken(named name: String) async throws -> WriteResult {
        try AccessToken.checkName(name)
        return try await write { batch in WriteResult(revision: try batch.revokeToken(named: name)) }
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
