/// The body of `POST /v1/tokens`: the new token's name, role and scope.
package struct TokenRequest: Codable, Sendable, Hashable {
    /// The name.
    package var name: String
    /// What it may do.
    package var role: AccessRole
    /// Where; `/` when absent.
    package var scope: ScopePath

    /// A request for a token named `name`, with `role` at `scope`.
    package init(name: String, role: AccessRole, scope: ScopePath = .root) {
        self.name = name
        self.role = role
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case name, role, scope
    }

    /// Decodes a body as strictly as every other: no unknown field, a valid name.
    package init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a token")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        try AccessToken.checkName(name)
        role = try container.decode(AccessRole.self, forKey: .role)
        scope = try container.decodeUnlessAbsent(ScopePath.self, forKey: .scope) ?? .root
    }
}
