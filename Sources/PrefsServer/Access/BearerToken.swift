/// The token every request on the loopback TCP listener must carry: `Authorization: Bearer
/// TOKEN`. The scheme name is matched in any case (`bearer`, `BEARER`: RFC 9110 §11.1), the token
/// exactly, and the comparison takes the same time however much of the token a guess gets right.
/// (The Unix socket checks its peer's uid instead: ``PeerCredentialsHandler``.)
struct BearerToken: Sendable {
    /// The token's bytes.
    let bytes: [UInt8]

    /// The author the changes made with the token are by: tokens have no names of their own yet.
    static let authorName = "token:default"

    /// Whether an `Authorization` header's value `presented` carries this token.
    func admits(_ presented: String?) -> Bool {
        Self.matches(presented.map { Array($0.utf8) } ?? [], token: bytes)
    }

    /// Whether `presented` (an `Authorization` header's value) is the scheme `Bearer`, in any
    /// case, then one or more spaces, then `token` exactly, in time that depends only on the
    /// lengths of the credentials and the token.
    static func matches(_ presented: [UInt8], token: [UInt8]) -> Bool {
        let scheme = Array("bearer".utf8)
        guard presented.count > scheme.count, presented[scheme.count] == UInt8(ascii: " "),
            zip(presented, scheme).allSatisfy({ byte, lower in byte | 0x20 == lower })
        else { return false }
        let credentials = presented.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        var difference = UInt8(credentials.count == token.count ? 0 : 1)
        for (index, expected) in token.enumerated() {
            difference |= expected ^ (index < credentials.count ? credentials[credentials.startIndex + index] : 0)
        }
        return difference == 0 && !token.isEmpty
    }
}
