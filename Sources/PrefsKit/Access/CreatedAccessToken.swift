/// A token just created: its description and its secret, shown this once — the store keeps only
/// a hash of it.
public struct CreatedAccessToken: Codable, Sendable, Hashable {
    /// The token.
    public var token: AccessToken
    /// What a request carries to act as the token: `Authorization: Bearer SECRET`.
    public var secret: String
    /// The revision that created it: a host that has taken it in accepts the token.
    public var revision: Revision

    /// A created token and its secret.
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - secret: Its secret.
    ///   - revision: The revision that created it.
    public init(token: AccessToken, secret: String, revision: Revision) {
        self.token = token
        self.secret = secret
        self.revision = revision
    }
}
