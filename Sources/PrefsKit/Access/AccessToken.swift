import Foundation

/// A named token as `GET /v1/tokens` and `prefsctl token list` show it: who it is, what it may
/// do and where, and when it was made and last used — never its secret, which only its creation
/// shows, once (``CreatedAccessToken``).
public struct AccessToken: Codable, Sendable, Hashable {
    /// The token's name, unique in the store: the author of the changes made with it is
    /// `token:NAME`.
    public var name: String
    /// What it may do.
    public var role: AccessRole
    /// Where: at this scope and below it.
    public var scope: ScopePath
    /// When it was created.
    public var created: Date
    /// Who created it.
    public var createdBy: String
    /// When a request last carried it, to the minute; nil if none has.
    public var lastUsed: Date?

    /// A token's description.
    ///
    /// - Parameters:
    ///   - name: The token's name.
    ///   - role: What it may do.
    ///   - scope: Where it may do it: at this scope and below.
    ///   - created: When it was created.
    ///   - createdBy: Who created it.
    ///   - lastUsed: When a request last carried it.
    public init(
        name: String, role: AccessRole, scope: ScopePath, created: Date, createdBy: String,
        lastUsed: Date? = nil
    ) {
        self.name = name
        self.role = role
        self.scope = scope
        self.created = created
        self.createdBy = createdBy
        self.lastUsed = lastUsed
    }

    /// The longest name a token may have.
    public static let maximumNameLength = 64

    /// The name of the token `prefsd --token-file` reads: an admin at `/`, kept apart from the
    /// named tokens in the store, so no named token may take it.
    public static let fileTokenName = "default"

    /// The author of the changes a request carrying the token named `name` makes.
    public static func authorName(of name: String) -> String { "token:\(name)" }

    /// Checks that `name` may name a token: 1 to 64 letters, digits, `.`, `_` and `-`, starting
    /// with a letter or digit, and not the file token's name.
    ///
    /// - Parameter name: The name to check.
    /// - Throws: ``PrefsError`` `invalid_request`, saying what is wrong with it.
    public static func checkName(_ name: String) throws {
        let isNameByte: (UInt8) -> Bool = { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
            default: false
            }
        }
        let bytes = Array(name.utf8)
        guard (1...maximumNameLength).contains(bytes.count), bytes.allSatisfy(isNameByte),
            isNameByte(bytes[0]) && bytes[0] != UInt8(ascii: ".") && bytes[0] != UInt8(ascii: "_") && bytes[0] != UInt8(ascii: "-")
        else {
            throw PrefsError(
                .invalidRequest,
                "A token's name is 1 to \(maximumNameLength) letters, digits, '.', '_' and '-', starting with a letter or digit, not '\(name.prefix(80))'."
            )
        }
        guard name != fileTokenName else {
            throw PrefsError(.invalidRequest, "'\(fileTokenName)' names the token of prefsd --token-file; choose another name.")
        }
    }
}
