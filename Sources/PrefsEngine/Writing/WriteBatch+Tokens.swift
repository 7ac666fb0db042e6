import PrefsKit

/// Creating and revoking named tokens: a row in the storage's token table and a change in the
/// log, whose `value` carries what every host needs to know the token (``StoredToken``).
extension WriteBatch {
    /// The token named `name` as this batch sees it.
    func token(named name: String) -> StoredToken? {
        if let changed = tokensChanged[name] { return changed }
        return tokens.token(named: name)
    }

    /// Creates `token`; `conflict` if its name is taken. Returns the change's revision.
    func createToken(_ token: StoredToken) throws -> Revision {
        guard self.token(named: token.name) == nil else {
            throw PrefsError(
                .conflict, "A token named '\(token.name)' exists; revoke it first (prefsctl token revoke \(token.name)), or choose another name.")
        }
        let revision = try recordEvent(ChangeEvent(revision: 0, kind: .tokenCreated, scope: token.scope, value: token.loggedValue))
        try connection.insertToken(token)
        tokensChanged[token.name] = token
        return revision
    }

    /// Revokes the token named `name`; `not_found` if there is none. Returns the change's
    /// revision.
    func revokeToken(named name: String) throws -> Revision {
        guard let token = token(named: name) else {
            throw PrefsError(.notFound, "No token is named '\(name)'; prefsctl token list shows them.")
        }
        let revision = try recordEvent(
            ChangeEvent(
                revision: 0, kind: .tokenRevoked, scope: token.scope,
                value: .object(["name": .string(name), "role": .string(token.role.rawValue)])))
        try connection.deleteToken(named: name)
        tokensChanged[name] = .some(nil)
        return revision
    }
}
