import PrefsKit
import Testing

@Suite("Key names")
struct KeyNameTests {
    @Test(
        "Valid names are accepted",
        arguments: [
            "a", "timeline", "timeline.fontSize", "compose.maxCharacters", "a.b.c.d", "k-1.x_2", "a.B", "a.0",
            "a.-", "x_y-z.A_B-C", "a1.2b.C3",
        ]
    )
    func valid(name: String) throws {
        try KeyName.validate(name)
        #expect(KeyName.isValid(name))
    }

    @Test(
        "Invalid names are refused with invalid_key",
        arguments: [
            "", "Timeline", "1abc", "_a", "-a", ".a", "a.", "a..b", "a b", "a/b", "a:b", "a.b.", "timeline.font size",
            "é", "aé", "a\u{0}", "a.b\n",
        ]
    )
    func invalid(name: String) {
        let error = #expect(throws: PrefsError.self) { try KeyName.validate(name) }
        #expect(error?.code == .invalidKey)
        #expect(!KeyName.isValid(name))
    }

    @Test("The limit is 256 UTF-8 bytes, inclusive")
    func lengthLimit() throws {
        #expect(KeyName.maximumLength == 256)
        let longest = "a" + String(repeating: "b", count: 255)
        #expect(longest.utf8.count == 256)
        try KeyName.validate(longest)

        let tooLong = longest + "c"
        let error = #expect(throws: PrefsError.self) { try KeyName.validate(tooLong) }
        #expect(error?.code == .invalidKey)
        #expect(error?.message.contains("257") == true)

        // Dotted names count their dots.
        let dotted = String(repeating: "a.", count: 128).dropLast() + "bb"
        #expect(dotted.utf8.count == 257)
        #expect(!KeyName.isValid(String(dotted)))
    }

    @Test("Error messages name the problem")
    func messages() {
        let empty = #expect(throws: PrefsError.self) { try KeyName.validate("") }
        #expect(empty?.message.contains("empty") == true)
        let doubleDot = #expect(throws: PrefsError.self) { try KeyName.validate("a..b") }
        #expect(doubleDot?.message.contains("empty part") == true)
        let trailing = #expect(throws: PrefsError.self) { try KeyName.validate("a.b.") }
        #expect(trailing?.message.contains("ends with a dot") == true)
        let upper = #expect(throws: PrefsError.self) { try KeyName.validate("Abc") }
        #expect(upper?.message.contains("lowercase") == true)
    }
}
