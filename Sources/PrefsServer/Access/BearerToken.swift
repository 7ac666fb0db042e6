/// What a request on the loopback TCP listener carries: `Authorization: Bearer TOKEN`. The scheme
/// name is matched in any case (`bearer`, `BEARER`: RFC 9110 §11.1). TOKEN is the file token
/// (`prefsd --token-file`), compared here in time that depends only on the lengths, or a named
/// token's secret, found by its hash (``ListenerAccess``).
/// (The Unix socket checks its peer's uid instead: ``PeerCredentialsHandler``.)
struct BearerToken: Sendable {
    /// The file token's bytes.
    let bytes: [UInt8]

    /// The credentials of an `Authorization` header's value: what follows the scheme `Bearer`, in
    /// any case, and one or more spaces; nil for another scheme or none.
    static func credentials(_ presented: String?) -> [UInt8]? {
        guard let presented else { return nil }
        let bytes = Array(presented.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count, bytes[scheme.count] == UInt8(ascii: " "),
            zip(bytes, scheme).allSatisfy({ byte, lower in byte | 0x20 == lower })
        else { return nil }
        let credentials = Array(bytes.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") })
        return credentials.isEmpty ? nil : credentials
    }

    /// Whether `credentials` are this token, in time that depends only on the lengths of the
    /// credentials and the token.
    func matches(_ credentials: [UInt8]) -> Bool {
        var difference = UInt8(credentials.count == bytes.count ? 0 : 1)
        for (index, expected) in bytes.enumerated() {
            difference |= expected ^ (index < credentials.count ? credentials[index] : 0)
        }
        return difference == 0 && !bytes.isEmpty
    }
}
