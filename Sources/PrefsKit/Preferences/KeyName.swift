/// Rules for preference key names: dotted, like `timeline.statusContentMode`.
///
/// A name starts with a lowercase letter, then letters, digits, `_` and `-`, and continues with
/// `.`-separated parts of the same characters. At most ``maximumLength`` UTF-8 bytes.
public enum KeyName {
    /// The longest key name accepted, in UTF-8 bytes.
    public static let maximumLength = 256

    /// Throws ``PrefsError`` `invalid_key` unless `name` is a valid key name.
    public static func validate(_ name: String) throws {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else {
            throw PrefsError(.invalidKey, "The key is empty. Keys look like 'timeline.fontSize'.")
        }
        guard bytes.count <= maximumLength else {
            throw PrefsError(.invalidKey, "The key is \(bytes.count) bytes long; the limit is \(maximumLength).")
        }
        guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0]) else {
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
