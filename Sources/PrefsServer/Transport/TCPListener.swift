import PrefsKit

/// Where `prefsd --listen` also serves the API over TCP, and the file token a request there may
/// carry (besides named tokens' secrets), over TLS when given a certificate and key. Without TLS,
/// loopback only unless explicitly allowed: a token is the only guard, and it travels in clear
/// text.
package struct TCPListener: Sendable {
    /// The host to bind: `127.0.0.1`, `::1`, `localhost`, …
    package let host: String
    /// The port to bind.
    package let port: Int
    /// The file token (an admin at `/`), as the bytes after `Bearer `; nil when only named tokens
    /// are accepted.
    package let token: [UInt8]?
    /// The certificate and key connections are served TLS with; nil: plain HTTP.
    package let tls: TLSIdentity?

    /// Parses `HOST:PORT` (`[::1]:PORT` for IPv6). Throws `invalid_request` for a malformed
    /// address or an empty token, and `forbidden` for a host that is not loopback, without `tls`,
    /// unless `allowNonLoopback`.
    package init(address: String, token: String?, allowNonLoopback: Bool = false, tls: TLSIdentity? = nil) throws {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw PrefsError(.invalidRequest, "--listen takes HOST:PORT, like 127.0.0.1:7878, not '\(address)'.")
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else {
            throw PrefsError(.invalidRequest, "--listen needs a host, like 127.0.0.1:\(port).")
        }
        guard allowNonLoopback || tls != nil || Self.isLoopback(host) else {
            throw PrefsError(
                .forbidden,
                "--listen \(address) is not a loopback address; the API would be reachable from other machines with only a bearer token in clear text. Use 127.0.0.1, serve TLS (--tls-cert FILE --tls-key FILE), or add --allow-non-loopback if you really mean it."
            )
        }
        let token = token?.trimmingWhitespace
        guard token?.isEmpty != true else { throw PrefsError(.invalidRequest, "The token file is empty.") }
        self.host = host
        self.port = port
        self.token = token.map { Array($0.utf8) }
        self.tls = tls
    }

    /// Whether `host` names this machine only: `localhost`, `127.0.0.0/8` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
