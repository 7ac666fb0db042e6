import Foundation
@testable import PrefsKit
import TestHarness
import Testing

@Suite("Three-way merge")
struct ThreeWayMergeTests {
    @Test("Edits to different words both survive")
    func differentWords() {
        let merged = ThreeWayMerge.mergeText(
            base: "The quick brown fox jumps over the lazy dog.",
            ours: "The quick red fox jumps over the lazy dog.",
            theirs: "The quick brown fox jumps over the sleepy dog.")
        #expect(merged == "The quick red fox jumps over the sleepy dog.")
    }

    @Test("Edits to different paragraphs both survive; insertions at both ends too")
    func differentParagraphs() {
        let base = "First paragraph.\n\nSecond paragraph.\n"
        let merged = ThreeWayMerge.mergeText(
            base: base, ours: "Intro. First paragraph, edited.\n\nSecond paragraph.\n",
            theirs: "First paragraph.\n\nSecond paragraph, also edited.\nPS.\n")
        #expect(merged == "Intro. First paragraph, edited.\n\nSecond paragraph, also edited.\nPS.\n")
    }

    @Test("Edits to the same words conflict")
    func sameWordsConflict() {
        #expect(ThreeWayMerge.mergeText(base: "See you at noon.", ours: "See you at one.", theirs: "See you at two.") == nil)
        #expect(ThreeWayMerge.mergeText(base: "", ours: "Hello", theirs: "Bye") == nil, "both typed into an empty draft")
    }

    @Test("The same edit on both sides is taken once; an edit against none is taken")
    func sameEditOnce() {
        #expect(ThreeWayMerge.mergeText(base: "a b c", ours: "a x c", theirs: "a x c") == "a x c")
        #expect(ThreeWayMerge.mergeText(base: "a b c", ours: "a b c", theirs: "a b") == "a b")
        #expect(ThreeWayMerge.mergeText(base: "a b c", ours: "", theirs: "a b c") == "")
    }

    @Test("A deletion beside an edit of the next word conflicts: nothing unchanged lies between them")
    func adjacentEditsConflict() {
        #expect(ThreeWayMerge.mergeText(base: "one two", ours: "one", theirs: "one three") == nil)
    }

    @Test("Words, spaces and punctuation are the pieces, and they join back to the text")
    func pieces() {
        let text = "Héllo, wörld 42!\n\tÉtat—ok 🙂"
        let words = ThreeWayMerge.words(of: text)
        #expect(words.joined() == text)
        #expect(words.prefix(4) == ["Héllo", ",", " ", "wörld"])
        #expect(ThreeWayMerge.lines(of: "a\nb\r\nc").map(String.init) == ["a\n", "b\r\n", "c"])
        #expect(ThreeWayMerge.words(of: "").isEmpty)
    }

    /// The pieces, read from the bytes, are those a walk over the text's characters cuts: on
    /// seeded mixes of ASCII and characters that join what is beside them (combining marks,
    /// CR LF, emoji sequences, flags).
    @Test("The pieces are cut where a walk over the characters cuts them", arguments: 0..<4)
    func piecesByCharacter(batch: Int) {
        let fragments = [
            "a", "Z", "9", " ", ",", "\r", "\n", "\r\n", "e\u{301}", "\u{301}", "é", "ß", "٣", "한", "🙂",
            "👩\u{200D}👩\u{200D}👧", "\u{200D}", "🇫🇷", "🇫", "x\u{20DD}", "\t", "—", "\u{0}",
        ]
        for seed in UInt64(batch * 250)..<UInt64(batch * 250 + 250) {
            var random = SplitMix64(seed: seed)
            let text = (0..<(1 + random.next() % 40)).map { _ in fragments[Int(random.next() % UInt64(fragments.count))] }.joined()
            var expected: [Substring] = []
            var start = text.startIndex
            for index in text.indices where index != start {
                let (before, this) = (text[text.index(before: index)], text[index])
                if !((before.isLetter || before.isNumber) && (this.isLetter || this.isNumber)) {
                    expected.append(text[start..<index])
                    start = index
                }
            }
            if start < text.endIndex { expected.append(text[start...]) }
            #expect(ThreeWayMerge.words(of: text) == expected, "seed \(seed): \(text.unicodeScalars.map { $0.value })")
        }
    }

    /// `git merge-file` on seeded random line edits: wherever it finds no conflict, the merge by
    /// lines gives the same text. (A failing seed is printed and replays exactly.)
    @Test("By lines, it agrees with git merge-file wherever that finds no conflict", arguments: 0..<16)
    func agreesWithGit(batch: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefs-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var clean = 0
        for seed in UInt64(batch * 50)..<UInt64(batch * 50 + 50) {
            var random = SplitMix64(seed: seed)
            let base = (0..<(5 + Int(random.next() % 20))).map { _ in Self.line(&random) }
            let (ours, theirs) = (Self.edit(base, &random), Self.edit(base, &random))
            let texts = [base, ours, theirs].map { $0.joined() }
            let ourMerge = ThreeWayMerge.mergeLines(base: texts[0], ours: texts[1], theirs: texts[2])
            guard let gits = try await Self.gitMergeFile(base: texts[0], ours: texts[1], theirs: texts[2], in: folder) else {
                continue
            }
            clean += 1
            #expect(ourMerge == gits, "seed \(seed)\nbase:\n\(texts[0])\nours:\n\(texts[1])\ntheirs:\n\(texts[2])")
        }
        #expect(clean > 10, "the corpus has cases git merges cleanly")
    }

    /// A line from a small vocabulary, so that lines repeat as in real text.
    private static func line(_ random: inout SplitMix64) -> String {
        ["alpha\n", "beta\n", "gamma\n", "delta\n", "\n", "epsilon zeta\n", "eta\n", "theta iota\n", "kappa\n", "lambda\n"][
            Int(random.next() % 10)]
    }

    /// `lines` with one to three lines inserted, removed or replaced at random places.
    private static func edit(_ lines: [String], _ random: inout SplitMix64) -> [String] {
        var edited = lines
        for _ in 0..<(1 + Int(random.next() % 3)) {
            let at = Int(random.next() % UInt64(edited.count + 1))
            switch random.next() % 3 {
            case 0: edited.insert("new \(random.next() % 1000)\n", at: at)
            case 1 where at < edited.count: edited.remove(at: at)
            default: if at < edited.count { edited[at] = "changed \(random.next() % 1000)\n" }
            }
        }
        return edited
    }

    /// What `git merge-file -p` merges, or nil when it reports a conflict.
    private static func gitMergeFile(base: String, ours: String, theirs: String, in folder: URL) async throws -> String? {
        let files = ["ours", "base", "theirs"].map { folder.appending(path: $0) }
        for (file, text) in zip(files, [ours, base, theirs]) { try text.write(to: file, atomically: true, encoding: .utf8) }
        let output = folder.appending(path: "merged")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        // TestHarness's ChildProcess, not Foundation's Process, which crashes a process with many
        // descriptors open now and then (see ChildProcess).
        let git = try ChildProcess(
            "/usr/bin/git", ["merge-file", "-p"] + files.map(\.path), standardOutput: .descriptor(handle.fileDescriptor))
        let status = await git.waitForExit()
        #expect(status <= 127, "git merge-file failed: it exits with the number of conflicts, at most 127, or -1")
        return status == 0 ? try String(contentsOf: output, encoding: .utf8) : nil
    }
}
