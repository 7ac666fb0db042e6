/// A preference key's name, checked: dotted, like `timeline.statusContentMode`.
///
/// A name starts with a lowercase letter, then letters, digits, `_` and `-`, and continues with
/// `.`-separated parts of the same characters. At most ``maximumLength`` UTF-8 bytes.
///
/// A name is checked once, where it enters — ``init(_:)`` throws ``PrefsError`` `invalid_key`
/// for one that breaks the rules — and every layer behind takes the `KeyName` as it is. The
/// service's methods that take a `String` are that entrance for Swift callers.
public struct KeyName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name.
    public let rawValue: String

    /// `name`, checked.
    ///
    /// - Parameter name: The key name.
    /// - Throws: ``PrefsError`` — `invalid_key` if it breaks the rules.
    public init(_ name: String) throws {
        try Self.validate(name)
        rawValue = name
    }

    /// `name` as it is, for a name this package has checked before: one read back from its
    /// own storage.
    package init(checked name: String) {
        rawValue = name
    }

    public var description: String { rawValue }

    public static func < (lhs: KeyName, rhs: KeyName) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The longest key name accepted, in UTF-8 bytes.
    public static let maximumLength = 256

    /// Checks that `name` is a valid key name.
    ///
    /// - Parameter name: The key name to check.
    /// - Throws: ``PrefsError`` — `invalid_key`, saying which rule it breaks, unless it is valid.
    public static func validate(_ name: String) throws {
        let bytes = name.utf8
        guard let first = bytes.first else {
            throw PrefsError(.invalidKey, "The key is empty. Keys look like 'timeline.fontSize'.")
        }
        guard bytes.count <= maximumLength else {
            throw PrefsError(.invalidKey, "The key is \(bytes.count) bytes long; the limit is \(maximumLength).")
        }
        guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            throw PrefsError(.invalidKey, "The key '\(name)' must start with a lowercase letter (a-z).")
        }
        var previousWasDot = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard !previousWasDot else {
                    throw PrefsError(.invalidKey, "The key '\(name)' has an empty part between dots.")
                }
                previousWasDot = true
            } else if isNameCharacter(byte) {
                previousWasDot = false
            } else {
                throw PrefsError(
                    .invalidKey,
                    "The key '\(name)' may contain only letters, digits, '_', '-' and '.' between parts."
                )
            }
        }
        guard !previousWasDot else {
            throw PrefsError(.invalidKey, "The key '\(name)' ends with a dot.")
        }
    }

    /// Whether `name` is a valid key name.
    ///
    /// - Parameter name: The key name to check.
    /// - Returns: Whether it keeps every rule.
    public static func isValid(_ name: String) -> Bool {
        (try? validate(name)) != nil
    }

    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}
