/// What a request's `Connection` header asks of the connection, read the one way every path
/// reads it — the router's, and the fast paths' from raw bytes or decoded heads alike.
///
/// The header is a comma-separated list of options in any case (RFC 9110 §7.6.1), possibly over
/// several header lines: `close` anywhere in it asks to close the connection after the answer,
/// whatever else it holds; `keep-alive` asks an HTTP/1.0 connection to persist (RFC 9112 §9.3).
struct ConnectionOptions: Equatable {
    /// Whether the list holds `close`.
    private(set) var close = false
    /// Whether the list holds `keep-alive`.
    private(set) var keepAlive = false

    /// The options the `Connection` header lines `values` list.
    init(_ values: some Sequence<some StringProtocol>) {
        for value in values { take(value.utf8) }
    }

    /// Adds the options of one more `Connection` header line, as its bytes.
    mutating func take(_ value: some Collection<UInt8>) {
        for option in value.split(separator: UInt8(ascii: ",")) {
            let token = option.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            if Self.equalsIgnoringCase(token, "close") { close = true }
            if Self.equalsIgnoringCase(token, "keep-alive") { keepAlive = true }
        }
    }

    /// The options of one `Connection` header line, or of none.
    init(_ value: String?) {
        self.init(value.map { [$0] } ?? [])
    }

    /// Whether the connection stays open after the answer to a request with these options: for
    /// HTTP/1.1, unless it asks to close; for HTTP/1.0 (`http10`), only if it asks to keep alive
    /// (and not to close).
    func persists(http10: Bool) -> Bool {
        !close && (!http10 || keepAlive)
    }

    /// Whether `bytes` spell `name` (lowercase ASCII), in any case.
    private static func equalsIgnoringCase(_ bytes: some Collection<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return zip(bytes, UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)).allSatisfy { byte, lower in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == lower
        }
    }
}
