/// The key-name rule of `PrefsKit.KeyName`, repeated here because a macro cannot depend on the
/// library that declares it: `[a-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*`, at most 256 UTF-8 bytes.
enum KeyNameRule {
    /// The longest key name accepted, in UTF-8 bytes.
    static let maximumLength = 256

    /// Why `name` is not a valid key name (a clause: "must start with …"), or nil if it is one.
    static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return "is empty" }
        guard bytes.count <= maximumLength else {
            return "is \(bytes.count) bytes long; the limit is \(maximumLength)"
        }
        guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return "must start with a lowercase letter (a-z)"
        }
        var previousWasDot = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                if previousWasDot { return "has an empty part between dots" }
                previousWasDot = true
            } else if isNameCharacter(byte) {
                previousWasDot = false
            } else {
                return "may contain only letters, digits, '_', '-' and '.' between parts"
            }
        }
        return previousWasDot ? "ends with a dot" : nil
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
