/// What a request may do, as the daemon found out from how it came: the Unix socket's owner and
/// the `--token-file` token are admins at `/`; a named token has its role and scope. Every
/// endpoint asks it before it reads or changes anything.
package struct AccessGrant: Sendable, Hashable {
    /// The named token the request carries; nil for the socket's owner and the file token, which
    /// cannot be revoked.
    package var token: String?
    /// What it may do.
    package var role: AccessRole
    /// Where: at this scope and below it.
    package var scope: ScopePath

    /// A grant of `role` at `scope`, to the named token `token` if any.
    package init(token: String? = nil, role: AccessRole, scope: ScopePath) {
        self.token = token
        self.role = role
        self.scope = scope
    }

    /// The socket's owner, and the `--token-file` token: an admin at `/`.
    package static let everything = AccessGrant(role: .admin, scope: .root)

    /// Whether the grant reaches everywhere: its answers need hide nothing.
    package var coversEverything: Bool { scope == .root }

    /// Whether it may act as `role` at `scope`.
    package func permits(_ role: AccessRole, at scope: ScopePath) -> Bool {
        self.role >= role && self.scope.contains(scope)
    }

    /// Whether `scope` is at or below the grant's scope.
    package func covers(_ scope: ScopePath) -> Bool {
        self.scope.contains(scope)
    }

    /// Whether the grant covers the drafts of `account`: its scope holds `/accounts/ACCOUNT`.
    package func covers(account: String) -> Bool {
        coversEverything || (try? Self.scope(ofAccount: account)).map(covers) == true
    }

    /// Throws `forbidden` unless the grant may act as `role` at `scope`; `action` says what the
    /// request does ("setting a value"), for the message.
    package func check(_ role: AccessRole, at scope: ScopePath, for action: String) throws {
        guard !permits(role, at: scope) else { return }
        throw refusal(needing: role, at: scope, for: action)
    }

    /// Throws `forbidden` unless the grant may act as `role` on the drafts of `account`.
    package func check(_ role: AccessRole, account: String, for action: String) throws {
        guard !coversEverything else { return try check(role, at: .root, for: action) }
        let scope = try Self.scope(ofAccount: account)
        try check(role, at: scope, for: action)
    }

    /// The scope whose grants cover an account's drafts: `/accounts/ACCOUNT`.
    package static func scope(ofAccount account: String) throws -> ScopePath {
        try ScopePath("/accounts").appending(account)
    }

    /// The `forbidden` error of a request that needs `role` at `scope`.
    package func refusal(needing role: AccessRole, at scope: ScopePath, for action: String) -> PrefsError {
        let holder = token.map { "Token '\($0)'" } ?? "This caller"
        let reach = scope == .root ? "at /" : "at \(scope.path) or above it"
        return PrefsError(
            .forbidden,
            "\(holder) is \(Self.article(self.role)) \(self.role) at \(self.scope.path); \(action) needs \(Self.article(role)) \(role) \(reach). Nothing was changed."
        )
    }

    private static func article(_ role: AccessRole) -> String {
        role == .admin ? "an" : "a"
    }
}

extension AccessGrant {
    /// `resolved` as the grant may see it: the value and its source always (a value at its scope
    /// may come from above it), but the layers of an explanation above its scope without their
    /// values and revisions.
    package func redacting(_ resolved: ResolvedPreference) -> ResolvedPreference {
        guard !coversEverything, let chain = resolved.chain else { return resolved }
        var redacted = resolved
        redacted.chain = chain.map { layer in
            switch layer.layer {
            case .scope(let scope), .lock(let scope):
                guard !covers(scope) else { return layer }
                return ChainLayer(layer: layer.layer, value: nil, revision: nil)
            default:
                return layer
            }
        }
        return redacted
    }
}
