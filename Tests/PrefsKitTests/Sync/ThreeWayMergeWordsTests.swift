@testable import PrefsKit
import TestHarness
import Testing

/// The drafts' promise at the merge's own level: on seeded random edits of one text, a merge that
/// succeeds keeps every word either side inserted and every word both kept, and drops every word
/// a side deleted. (A conflict claims nothing.) A failing seed is printed and replays exactly.
@Suite("Three-way merge: the words each side inserted survive")
struct ThreeWayMergeWordsTests {
    /// Two random edit scripts of one base text, and what the property demands of their merge.
    struct Case {
        var base: String
        var ours: String
        var theirs: String

        /// Filler words that repeat in the base (so that a side's edit may be placed more than
        /// one way); the property speaks only of the other words, each of which is unique.
        static let fillers = ["the", "a", "and", "of"]

        /// The case that follows from `seed`: a base of 20 to 80 words, each side making one to
        /// four insertions of new words (its own) and deletions at random places.
        init(seed: UInt64) {
            var random = SplitMix64(seed: seed)
            let base = (0..<(20 + Int(random.next() % 61))).map { index in
                Self.word(random.next() % 4 == 0 ? Self.fillers[Int(random.next() % 4)] : "w\(index)", &random)
            }
            let texts = [base, Self.edit(base, side: "o", &random), Self.edit(base, side: "t", &random)].map { $0.joined() }
            (self.base, ours, theirs) = (texts[0], texts[1], texts[2])
        }

        /// `word` and the separator after it: a space mostly; now and then a comma, a full stop
        /// or a paragraph break.
        private static func word(_ word: String, _ random: inout SplitMix64) -> String {
            word + [" ", " ", " ", " ", " ", ", ", ". ", ".\n\n"][Int(random.next() % 8)]
        }

        /// `words` (each with its separator) with one to four edits: a new word (named `side`
        /// and a number) inserted, or a word deleted, at random places.
        private static func edit(_ words: [String], side: String, _ random: inout SplitMix64) -> [String] {
            var edited = words
            for number in 0..<(1 + Int(random.next() % 4)) {
                let at = Int(random.next() % UInt64(edited.count + 1))
                if random.next() % 2 == 0 || at == edited.count {
                    edited.insert(word("\(side)\(number)x\(random.next() % 1000)", &random), at: at)
                } else {
                    edited.remove(at: at)
                }
            }
            return edited
        }

        /// What `merged` breaks of the property; empty if it holds.
        func violations(of merged: String) -> [String] {
            let (base, ours, theirs, merged) = (Self.words(base), Self.words(ours), Self.words(theirs), Self.words(merged))
            let inserted = ours.union(theirs).subtracting(base)
            let kept = base.intersection(ours).intersection(theirs)
            let deleted = base.subtracting(ours).union(base.subtracting(theirs))
            return inserted.subtracting(merged).sorted().map { "inserted \($0), missing" }
                + kept.subtracting(merged).sorted().map { "kept by both \($0), missing" }
                + deleted.intersection(merged).sorted().map { "deleted \($0), still there" }
        }

        /// The unique words of `text`.
        static func words(_ text: String) -> Set<Substring> {
            Set(text.split(whereSeparator: { !$0.isLetter && !$0.isNumber })).subtracting(fillers.map { $0[...] })
        }
    }

    @Test("Every word inserted, or kept by both, is in the merge; none deleted is", arguments: 0..<8)
    func wordsSurvive(batch: Int) {
        var clean = 0
        for seed in UInt64(batch * 100)..<UInt64(batch * 100 + 100) {
            let edits = Case(seed: seed)
            guard let merged = ThreeWayMerge.mergeText(base: edits.base, ours: edits.ours, theirs: edits.theirs) else { continue }
            clean += 1
            let violations = edits.violations(of: merged)
            #expect(
                violations.isEmpty,
                "seed \(seed): \(violations)\nbase:\n\(edits.base)\nours:\n\(edits.ours)\ntheirs:\n\(edits.theirs)\nmerged:\n\(merged)")
        }
        #expect(clean >= 50, "most of the 100 cases merge, so the property is put to the test")
    }

    @Test("The check fails a merge that drops an insertion, loses a word both kept or keeps a deleted one")
    func checkCanFail() throws {
        let (edits, merged) = try #require(
            (0..<100).lazy.map { Case(seed: $0) }.compactMap { edits in
                ThreeWayMerge.mergeText(base: edits.base, ours: edits.ours, theirs: edits.theirs).map { (edits, $0) }
            }.first { edits, merged in
                !Case.words(edits.ours).subtracting(Case.words(edits.base)).isEmpty
                    && !Case.words(edits.base).subtracting(Case.words(merged)).isEmpty
            })
        #expect(edits.violations(of: merged).isEmpty)
        // `merged` without the piece `word`.
        func without(_ word: Substring) -> String { ThreeWayMerge.words(of: merged).filter { $0 != word }.joined() }
        let inserted = try #require(Case.words(edits.ours).subtracting(Case.words(edits.base)).min())
        #expect(edits.violations(of: without(inserted)) == ["inserted \(inserted), missing"])
        let kept = try #require(Case.words(merged).intersection(Case.words(edits.base)).min())
        #expect(edits.violations(of: without(kept)) == ["kept by both \(kept), missing"])
        let deleted = try #require(Case.words(edits.base).subtracting(Case.words(merged)).min())
        #expect(edits.violations(of: merged + " \(deleted)") == ["deleted \(deleted), still there"])
    }
}
