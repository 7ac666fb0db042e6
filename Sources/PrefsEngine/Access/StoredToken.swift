import Foundation
import PrefsKit

/// A named token as the storage keeps it: its description, and the SHA-256 of its secret (never
/// the secret itself).
package struct StoredToken: Sendable, Hashable {
    /// The name.
    package var name: String
    /// What it may do.
    package var role: AccessRole
    /// Where.
    package var scope: ScopePath
    /// The SHA-256 of its secret, in lowercase hex.
    package var secretSHA256: String
    /// When it was created, in seconds since 1970.
    package var createdAt: Double
    /// The author who created it.
    package var createdBy: String
    /// When a request last carried it, in seconds since 1970, as last recorded.
    package var lastUsedAt: Double?

    /// A token's row.
    package init(
        name: String, role: AccessRole, scope: ScopePath, secretSHA256: String, createdAt: Double,
        createdBy: String, lastUsedAt: Double? = nil
    ) {
        self.name = name
        self.role = role
        self.scope = scope
        self.secretSHA256 = secretSHA256
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.lastUsedAt = lastUsedAt
    }

    /// The token as `GET /v1/tokens` shows it.
    package var description: AccessToken {
        AccessToken(
            name: name, role: role, scope: scope, created: Date(timeIntervalSince1970: createdAt),
            createdBy: createdBy, lastUsed: lastUsedAt.map { Date(timeIntervalSince1970: $0) })
    }

    // MARK: In the change log

    /// The change log's `value` of the change that created it: all but when it was last used, so
    /// that every host taking the change in knows the token at once.
    var loggedValue: JSONValue {
        .object([
            "name": .string(name), "role": .string(role.rawValue), "sha256": .string(secretSHA256),
            "createdBy": .string(createdBy),
        ])
    }

    /// The token a `token.created` change made, read back from the change log.
    init?(created event: ChangeEvent, time: Double) {
        guard event.kind == .tokenCreated, case .object(let fields)? = event.value, case .string(let name)? = fields["name"],
            case .string(let role)? = fields["role"], let role = AccessRole(rawValue: role),
            case .string(let digest)? = fields["sha256"], let scope = event.scope
        else { return nil }
        var createdBy = "unknown"
        if case .string(let author)? = fields["createdBy"] { createdBy = author }
        self.init(
            name: name, role: role, scope: scope, secretSHA256: digest, createdAt: time,
            createdBy: createdBy)
    }

    /// What the audit log shows of a token change's logged value: its name and role, not the
    /// hash of its secret.
    static func auditValue(of value: JSONValue?) -> JSONValue? {
        guard case .object(var fields)? = value else { return value }
        fields["sha256"] = nil
        fields["createdBy"] = nil
        return .object(fields)
    }
}
