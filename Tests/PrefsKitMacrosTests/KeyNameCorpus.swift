import Testing

/// Key names with the verdict the rule gives them — `[a-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*`, at
/// most 256 UTF-8 bytes — stated here a third time, as character sets, so that the two
/// implementations that must agree cannot also agree on a mistake.
enum KeyNameCorpus {
    /// A name and whether it is valid.
    struct Sample: Sendable, CustomTestStringConvertible {
        var name: String
        var isValid: Bool

        var testDescription: String { "\(name.debugDescription.prefix(70)) \(isValid ? "valid" : "invalid")" }
    }

    /// What a name starts with.
    static let lowercase = "abcdefghijklmnopqrstuvwxyz"
    /// What a part may hold after its first character.
    static let nameCharacters = lowercase + lowercase.uppercased() + "0123456789_-"

    /// Every sample.
    static let samples: [Sample] = handPicked + lengths + everyASCIICharacter

    /// Empty parts, dots in every position, starts, and text beyond ASCII.
    static let handPicked: [Sample] =
        ["a", "timeline", "timeline.fontSize", "a.b.c.d", "k-1.x_2", "a.B", "a.0", "a.-", "a._", "x_y-z.A_B-C", "zZ9_-.Q"]
        .map { Sample(name: $0, isValid: true) }
        + [
            "", ".", "..", ".a", "a.", "a..b", "a...b", "a.b.", "a.b..c", "a.b.c.", "1a", "9", "Abc", "Z", "_a", "-a",
            "a b", " a", "a ", "a\t", "a\n", "a.b\n", "a\u{0}", "a/b", "a:b", "a.b/c", "é", "aé", "a.é", "\u{0430}",
            "a\u{301}", "a😀", "ａ", "a\u{200B}", "a\u{7F}", "a.\u{80}",
        ].map { Sample(name: $0, isValid: false) }

    /// Around the 256-byte limit: plain, dotted, and too long with another fault as well (the
    /// length is reported first).
    static let lengths: [Sample] = [
        Sample(name: "a" + String(repeating: "b", count: 255), isValid: true),
        Sample(name: "a" + String(repeating: "b", count: 256), isValid: false),
        Sample(name: String(repeating: "a.", count: 127) + "bb", isValid: true),
        Sample(name: String(repeating: "a.", count: 128) + "b", isValid: false),
        Sample(name: "A" + String(repeating: "b", count: 256), isValid: false),
        Sample(name: "a" + String(repeating: "é", count: 128), isValid: false),
        Sample(name: String(repeating: "a", count: 1000), isValid: false),
    ]

    /// Each ASCII character first, inside a part, first in a part after a dot, and last.
    static let everyASCIICharacter: [Sample] = (0..<128).flatMap { code -> [Sample] in
        let character = Character(UnicodeScalar(UInt8(code)))
        let allowed = nameCharacters.contains(character)
        return [
            Sample(name: "\(character)a", isValid: lowercase.contains(character)),
            Sample(name: "a\(character)b", isValid: allowed || character == "."),
            Sample(name: "a.\(character)b", isValid: allowed),
            Sample(name: "ab\(character)", isValid: allowed),
        ]
    }
}
