import Foundation
import SeededRandom

/// Seeded drafts for the merge section, and two devices' edits of each: they replay exactly
/// from the seed.
struct MergeDrafts {
    /// One merge: a draft both devices started from, and each one's edit of it.
    struct Case {
        var base: String
        var ours: String
        var theirs: String
        /// What the merge must give when the edits are in different paragraphs; nil when both
        /// edited the same one (which may conflict).
        var expected: String?
    }

    /// How many characters each draft has.
    static let length = 5_000
    /// Of every ten pairs of edits, how many edit the same paragraph.
    static let sameParagraphInTen: UInt64 = 2

    private var random: SplitMix64

    /// Drafts and edits that follow from `seed`.
    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// A new draft and two edits of it.
    mutating func next() -> Case {
        let paragraphs = draft()
        let ourParagraph = pick(paragraphs.count)
        let theirParagraph = pick(10) < Self.sameParagraphInTen ? ourParagraph : otherThan(ourParagraph, paragraphs.count)
        var (ours, theirs) = (paragraphs, paragraphs)
        ours[ourParagraph] = edit(paragraphs[ourParagraph])
        theirs[theirParagraph] = edit(paragraphs[theirParagraph])
        var both = ours
        both[theirParagraph] = theirs[theirParagraph]
        let text = { (paragraphs: [String]) in paragraphs.joined(separator: "\n\n") }
        return Case(
            base: text(paragraphs), ours: text(ours), theirs: text(theirs),
            expected: ourParagraph == theirParagraph ? nil : text(both))
    }

    /// A new draft of ``length`` characters, on its own.
    mutating func nextDraft() -> String {
        draft().joined(separator: "\n\n")
    }

    /// `text` with one of its paragraphs edited as a person would (``edit(_:)``).
    mutating func edited(_ text: String) -> String {
        var paragraphs = text.components(separatedBy: "\n\n")
        let paragraph = pick(paragraphs.count)
        paragraphs[paragraph] = edit(paragraphs[paragraph])
        return paragraphs.joined(separator: "\n\n")
    }

    /// A draft of `length` characters: paragraphs of two to five sentences of four to eighteen
    /// words, with commas, the odd accented word and emoji; the last one cut where the length ends.
    private mutating func draft() -> [String] {
        var paragraphs: [String] = []
        var count = 0
        while count < Self.length {
            var sentences: [String] = []
            for _ in 0..<(2 + pick(4)) {
                var words = (0..<(4 + pick(15))).map { _ in Self.vocabulary[pick(Self.vocabulary.count)] }
                words[0] = words[0].prefix(1).uppercased() + words[0].dropFirst()
                for index in words.indices.dropLast() where pick(8) == 0 { words[index] += "," }
                sentences.append(words.joined(separator: " ") + [".", ".", ".", "?", "!"][pick(5)])
            }
            let paragraph = sentences.joined(separator: " ")
            count += (paragraphs.isEmpty ? 0 : 2) + paragraph.count
            paragraphs.append(paragraph)
        }
        let last = paragraphs.count - 1
        paragraphs[last] = String(paragraphs[last].dropLast(count - Self.length))
        return paragraphs
    }

    /// `paragraph` with one to four of its words edited: a word inserted before one, one
    /// replaced, or one deleted (with the space after it).
    private mutating func edit(_ paragraph: String) -> String {
        var words = paragraph.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        for _ in 0..<(1 + pick(4)) {
            let at = pick(words.count)
            switch pick(3) {
            case 0: words.insert(Self.newWords[pick(Self.newWords.count)], at: at)
            case 1: words[at] = Self.newWords[pick(Self.newWords.count)]
            default: if words.count > 1 { words.remove(at: at) }
            }
        }
        return words.joined(separator: " ")
    }

    /// A number below `count`.
    private mutating func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }

    /// A number below `count` other than `excluded`.
    private mutating func otherThan(_ excluded: Int, _ count: Int) -> Int { (excluded + 1 + pick(count - 1)) % count }

    /// The drafts' words: common ones repeat, as in real text.
    private static let vocabulary = """
        the of and to a in is it you that he was for on are with as I his they be at one have this from or had by \
        not word but what some we can out other were all there when up use your how said an each she which do \
        their time if will way about many then them write would like so these her long make thing see him two \
        has look more day could go come did number sound no most people my over know water than call first who \
        may down side been now find any new work part take get place made live where after back little only \
        round man year came show every good me give our under name very through just form sentence great think \
        say help low line differ turn cause much mean before move right boy old too same tell does set three \
        want air well also play small end put home read hand port large spell add even land here must big high \
        such follow act why ask men change went light kind off need house picture try us again animal point \
        mother world near build self earth father café naïve façade über déjà vu 🙂 👍
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)

    /// The words an edit brings in, some of them also in ``vocabulary``.
    private static let newWords = """
        really quickly tomorrow draft note edited honestly maybe the a again later friends photos weekend \
        rain sunny coffee meeting 2027 #travel @alice ok!
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
}
