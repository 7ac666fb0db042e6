import Foundation

/// A sign-in link to prefsd's console (`prefsctl ui`): its address carries a one-time code, in the
/// fragment so that no server or proxy logs it, which the console trades for a session — nobody
/// pastes a secret.
public struct ConsoleLink: Codable, Sendable, Hashable {
    /// The address to open: `http://127.0.0.1:PORT/ui/#signin=CODE`.
    public var url: String
    /// When the code stops working; it works once.
    public var expiresAt: Date
    /// What the session it opens may do.
    public var role: AccessRole
    /// Where: at this scope and below it.
    public var scope: ScopePath

    /// A link to `url`, for a session with `role` at `scope`, usable until `expiresAt`.
    public init(url: String, expiresAt: Date, role: AccessRole, scope: ScopePath) {
        self.url = url
        self.expiresAt = expiresAt
        self.role = role
        self.scope = scope
    }
}

/// The body of `POST /v1/ui/links`: what the session a link opens may do, within what its
/// creator may; each absent field is the creator's own.
package struct ConsoleLinkRequest: Codable, Sendable, Hashable {
    /// The session's role: a `reader` link opens a read-only console.
    package var role: AccessRole?
    /// The session's scope.
    package var scope: ScopePath?

    /// A request for a link with `role` at `scope`.
    package init(role: AccessRole? = nil, scope: ScopePath? = nil) {
        self.role = role
        self.scope = scope
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case role, scope
    }

    /// Decodes a body as strictly as every other: no unknown field.
    package init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a sign-in link request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        role = try container.decodeUnlessAbsent(AccessRole.self, forKey: .role)
        scope = try container.decodeUnlessAbsent(ScopePath.self, forKey: .scope)
    }
}

/// The body of `POST /ui/session`: the code of a sign-in link, or a token — one of them.
package struct ConsoleSignIn: Decodable, Sendable, Hashable {
    /// The code of a link `prefsctl ui` made.
    package var code: String?
    /// A token: `prefsd --token-file`'s, or a named token's secret.
    package var token: String?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case code, token
    }

    /// Decodes a body as strictly as every other: no unknown field, and a code or a token.
    package init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a sign-in")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decodeUnlessAbsent(String.self, forKey: .code)
        token = try container.decodeUnlessAbsent(String.self, forKey: .token)
        guard (code == nil) != (token == nil) else {
            throw PrefsError(.invalidRequest, "A sign-in takes {\"code\": …} from a prefsctl ui link, or {\"token\": …} — one of them.")
        }
    }
}
