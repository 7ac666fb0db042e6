import PrefsKit
import SeededRandom
import Testing

/// ``TextSplice``: the one splice between two texts makes the one from the other, whatever the
/// characters, and a splice that does not fit its text is refused.
@Suite("Text splice")
struct TextSpliceTests {
    @Test("an edit in one place is exactly that place's change")
    func oneEdit() throws {
        let splice = TextSplice(from: "Hello world", to: "Hello, brave world")
        #expect(splice == TextSplice(at: 5, delete: 0, insert: ", brave"))
        #expect(try splice.applied(to: "Hello world") == "Hello, brave world")
        #expect(TextSplice(from: "same", to: "same").isEmpty)
        #expect(try TextSplice(from: "", to: "new").applied(to: "") == "new")
        #expect(try TextSplice(from: "gone", to: "").applied(to: "gone") == "")
    }

    @Test("emoji, accents and combining marks stay whole")
    func scalars() throws {
        let old = "café 👩‍👩‍👧 e\u{301}t\u{E9}"
        let new = "café 👩‍👩‍👦 e\u{301}te"
        #expect(try TextSplice(from: old, to: new).applied(to: old) == new)
    }

    @Test("random edits of random texts come back exactly", arguments: 0..<8)
    func randomEdits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let alphabet = Array("ab cdé\n👍ß".unicodeScalars)
        func text(_ length: Int) -> String {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            return String(scalars)
        }
        for _ in 0..<200 {
            var old = Array(text(Int(random.next() % 60)).unicodeScalars)
            let new = old
            for _ in 0..<Int(random.next() % 4) {
                let at = old.isEmpty ? 0 : Int(random.next() % UInt64(old.count))
                let removed = min(Int(random.next() % 5), old.count - at)
                old.replaceSubrange(at..<(at + removed), with: text(Int(random.next() % 5)).unicodeScalars)
            }
            let (before, after) = (String(String.UnicodeScalarView(old)), String(String.UnicodeScalarView(new)))
            #expect(try TextSplice(from: before, to: after).applied(to: before) == after)
        }
    }

    @Test("a splice that does not fit its text is refused")
    func misfit() {
        #expect(throws: PrefsError.self) { try TextSplice(at: 4, delete: 2, insert: "x").applied(to: "abc") }
        #expect(throws: PrefsError.self) { try TextSplice(at: -1, delete: 0, insert: "x").applied(to: "abc") }
    }
}
