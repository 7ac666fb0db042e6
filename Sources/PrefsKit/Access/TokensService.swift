/// Named tokens: what lets programs reach the daemon's TCP listener, each with a role bounded by
/// a scope (`POST /v1/tokens`, `prefsctl token create`). They live in the store, so every host of
/// a shared database knows them; a revoked token is refused from the revision that revoked it on.
public protocol TokensService: Sendable {
    /// Creates a token, and returns it with its secret — shown this once; the store keeps only a
    /// hash of it.
    ///
    /// - Parameters:
    ///   - name: Its name: 1 to 64 letters, digits, `.`, `_` and `-`.
    ///   - role: What it may do.
    ///   - scope: Where: at this scope and below.
    /// - Throws: ``PrefsError`` — `conflict` for a name taken; `invalid_request` for a bad name.
    func createToken(named name: String, role: AccessRole, scope: ScopePath) async throws -> CreatedAccessToken

    /// Every token, by name, with when each was last used.
    func tokens() async throws -> [AccessToken]

    /// Revokes a token: from the revision answered on, every host refuses it, and the watches
    /// open with it end with a `revoked` event.
    ///
    /// - Parameter name: The token's name.
    /// - Throws: ``PrefsError`` `not_found` if there is no such token.
    @discardableResult
    func revokeToken(named name: String) async throws -> WriteResult
}
