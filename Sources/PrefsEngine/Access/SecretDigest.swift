import Crypto
import Foundation
import PrefsKit

/// The SHA-256 of a secret — a token's, a console session's or sign-in code's — as the key it is
/// found by: a request's secret is hashed and looked up, never compared byte by byte with a stored
/// secret — the store has none — so how long a lookup takes says nothing about any secret.
package struct SecretDigest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest of `secret`, read straight from the hash's bytes (big-endian words, as
    /// ``init(hex:)`` reads them): a request's token is hashed without copying it or the digest.
    package init(of secret: [UInt8]) {
        words = SHA256.hash(data: secret).withUnsafeBytes { bytes in
            func word(_ offset: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            return (word(0), word(8), word(16), word(24))
        }
    }

    /// A new secret: `prefix`, then 32 random bytes in base64url (43 characters).
    package static func newSecret(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return prefix
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The digest written as 64 lowercase hex digits; nil if it is not one.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.init(bytes: bytes)
    }

    private init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func word(_ start: Int) -> UInt64 { bytes[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        words = (word(0), word(8), word(16), word(24))
    }

    /// The digest in lowercase hex, as the storage keeps it.
    var hex: String {
        [words.0, words.1, words.2, words.3].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
            .lowercaseHex
    }

    package static func == (lhs: SecretDigest, rhs: SecretDigest) -> Bool {
        // Every word compared, whatever the first differences: no early exit.
        (lhs.words.0 ^ rhs.words.0) | (lhs.words.1 ^ rhs.words.1) | (lhs.words.2 ^ rhs.words.2) | (lhs.words.3 ^ rhs.words.3) == 0
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
