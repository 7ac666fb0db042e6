import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness

/// The drafts side of a ``SyncSimulation``: random draft writes on the devices and on the
/// upstream itself — creates, words typed and erased at random places, field changes, moves
/// within and between threads, attachments added (a few payloads, so the same bytes recur),
/// detached and described, deletes — and what each writer typed and knowingly removed, so
/// that once the network heals it can be checked that no typed word was lost.
///
/// Every word typed is a token of its own (a letter naming its writer, then a number:
/// `b17`), typed once: where it ends up says where the engine put that writer's text. A writer
/// removed a word knowingly when it showed the word where it erased it, or in a draft it deleted.
/// The workload draws from a generator of its own, derived from the simulation's seed: a
/// schedule replays exactly, and the preference writes and faults a seed draws are the same with
/// drafts or without.
final class DraftWorkload {
    /// Who writes a draft at a step.
    enum Writer {
        /// The device at this index of the simulation's devices.
        case device(Int)
        /// The upstream, through its own API.
        case upstream
    }

    /// The account whose drafts are written: within every device's reach.
    static let account = "alice"
    /// An account beyond the devices' reach: their drafts there are refused.
    static let foreignAccount = "bob"
    /// Where drafts are placed: outside any thread, or in one of two threads.
    static let threads: [String?] = [nil, "t1", "t2"]

    private var random: SplitMix64
    /// The letter each writer's words start with, by writer, given in order of first use.
    private var letters: [String: Character] = [:]
    /// How many words each writer typed.
    private var typedCount: [String: Int] = [:]
    /// Who typed each word, by word.
    private(set) var typed: [String: String] = [:]
    /// Who knowingly removed each word removed, by word: erased it from a text it showed, or
    /// deleted a draft that held it.
    private(set) var removed: [String: String] = [:]
    /// The drafts writers created, by ID: any other draft is a conflicted copy sync made.
    private(set) var created: Set<UUID> = []
    /// How many of each kind of write were made, by kind.
    private(set) var counts: [String: Int] = [:]

    /// A workload whose writes follow from `seed` (the simulation's).
    init(seed: UInt64) {
        random = SplitMix64(seed: seed ^ 0xD4AF_7E55_D4AF_7E55)
    }

    /// Who writes a draft at this step, if anyone: one step in ten a device among `running`, one
    /// in fifty the upstream (about 26 draft writes in a schedule of 220 steps, beside 66 of
    /// preferences).
    func nextWriter(among running: [Int]) -> Writer? {
        let roll = Int.random(in: 0..<100, using: &random)
        if roll < 2 { return .upstream }
        guard roll < 12 else { return nil }
        return running.randomElement(using: &random).map { .device($0) }
    }

    /// Makes one random draft write on `store` as `writer`; returns what it did, for the trace.
    func write(on store: EmbeddedStore, as writer: String) async throws -> String {
        // In an order that follows from the schedule: IDs are random, and break ties in the store's.
        let drafts = try await store.drafts(account: Self.account, thread: nil).sorted {
            ($0.thread ?? "", $0.position ?? -1, $0.createdAt, $0.text) < ($1.thread ?? "", $1.position ?? -1, $1.createdAt, $1.text)
        }
        let roll = Int.random(in: 0..<100, using: &random)
        guard roll >= 12, let draft = drafts.randomElement(using: &random) else {
            return try await create(on: store, as: writer, drafts: drafts)
        }
        switch roll {
        case 12..<38: return try await type(into: draft, on: store, as: writer)
        case 38..<52: return try await erase(from: draft, on: store, as: writer)
        case 52..<64: return try await changeField(of: draft, on: store)
        case 64..<76: return try await move(draft, on: store, drafts: drafts)
        case 76..<84: return try await attach(to: draft, on: store)
        case 84..<88: return try await changeAttachment(of: draft, on: store)
        case 88..<96: return try await delete(draft, on: store, as: writer)
        default: return try await createForeign(on: store)
        }
    }

    // MARK: Writes

    /// Creates a draft of a few new words, in a random place, some of its fields set.
    private func create(on store: EmbeddedStore, as writer: String, drafts: [Draft]) async throws -> String {
        let thread = Self.threads.randomElement(using: &random)!
        var input = DraftInput(account: Self.account, thread: thread)
        let words = (0..<Int.random(in: 1...3, using: &random)).map { _ in newWord(by: writer) }
        input.text = words.joined(separator: " ")
        if let thread, Bool.random(using: &random) {
            input.position = Int.random(in: 0...drafts.count { $0.thread == thread }, using: &random)
        }
        if Bool.random(using: &random) { input.language = randomLanguage() }
        if Bool.random(using: &random) { input.visibility = Draft.Visibility.allCases.randomElement(using: &random) }
        let draft = try await store.createDraft(input)
        created.insert(draft.id)
        return count("create", "\(draft.id.short) \(place(of: draft)) \"\(draft.text)\"")
    }

    /// Types one or two new words at a random boundary between words of `draft`'s text.
    private func type(into draft: Draft, on store: EmbeddedStore, as writer: String) async throws -> String {
        let words = (0..<Int.random(in: 1...2, using: &random)).map { _ in newWord(by: writer) }.joined(separator: " ")
        let text = draft.text
        let boundaries = [text.startIndex] + text.indices.filter { text[$0] == " " } + [text.endIndex]
        let at = boundaries.randomElement(using: &random)!
        let typed =
            if text.isEmpty {
                words
            } else if at == text.startIndex {
                words + " " + text
            } else {
                String(text[..<at]) + " " + words + text[at...]
            }
        var patch = DraftPatch()
        patch.text = .set(typed)
        _ = try await store.updateDraft(draft.id, patch, ifRevision: draft.revision)
        return count("type", "\(draft.id.short) +\"\(words)\"")
    }

    /// Erases one or two neighbouring words of `draft`'s text, and a space beside them.
    private func erase(from draft: Draft, on store: EmbeddedStore, as writer: String) async throws -> String {
        let text = draft.text
        let words = Self.wordRanges(in: text)
        guard !words.isEmpty else { return "erased nothing from \(draft.id.short): it has no words" }
        let first = Int.random(in: 0..<words.count, using: &random)
        let last = min(words.count - 1, first + Int.random(in: 0...1, using: &random))
        var range = words[first].lowerBound..<words[last].upperBound
        if range.upperBound < text.endIndex, text[range.upperBound] == " " {
            range = range.lowerBound..<text.index(after: range.upperBound)
        } else if range.lowerBound > text.startIndex, text[text.index(before: range.lowerBound)] == " " {
            range = text.index(before: range.lowerBound)..<range.upperBound
        }
        let erased = words[first...last].map { String(text[$0]) }
        var patch = DraftPatch()
        patch.text = .set(String(text[..<range.lowerBound] + text[range.upperBound...]))
        _ = try await store.updateDraft(draft.id, patch, ifRevision: draft.revision)
        for word in erased { removed[word] = writer }
        return count("erase", "\(draft.id.short) -\"\(erased.joined(separator: " "))\"")
    }

    /// Changes one of `draft`'s fields other than its text and place.
    private func changeField(of draft: Draft, on store: EmbeddedStore) async throws -> String {
        var patch = DraftPatch()
        let described: String
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let warning = ["spoilers", "food", nil].randomElement(using: &random)!
            patch.contentWarning = warning.map { .set($0) } ?? .clear
            described = "contentWarning=\(warning ?? "none")"
        case 1:
            let visibility = Draft.Visibility.allCases.randomElement(using: &random)!
            patch.visibility = .set(visibility)
            described = "visibility=\(visibility)"
        case 2:
            let language = Bool.random(using: &random) ? randomLanguage() : nil
            patch.language = language.map { .set($0) } ?? .clear
            described = "language=\(language ?? "none")"
        case 3:
            patch.sensitive = .set(!draft.sensitive)
            described = "sensitive=\(!draft.sensitive)"
        case 4:
            let post = ["post1", "post2", nil].randomElement(using: &random)!
            patch.replyTo = post.map { .set($0) } ?? .clear
            described = "replyTo=\(post ?? "none")"
        default:
            let hours = Int.random(in: 0...3, using: &random)
            let poll = hours > 0 ? Draft.Poll(options: ["yes", "no"], expiresIn: hours * 3600) : nil
            patch.poll = poll.map { .set($0) } ?? .clear
            described = "poll=\(poll.map { "\($0.expiresIn)s" } ?? "none")"
        }
        _ = try await store.updateDraft(draft.id, patch, ifRevision: draft.revision)
        return count("field", "\(draft.id.short) \(described)")
    }

    /// Moves `draft`: mostly to another place in its thread, else to another thread (or out of
    /// threads), at a random place there.
    private func move(_ draft: Draft, on store: EmbeddedStore, drafts: [Draft]) async throws -> String {
        var patch = DraftPatch()
        var thread = draft.thread
        if thread == nil || Int.random(in: 0..<3, using: &random) == 0 {
            thread = Self.threads.filter { $0 != draft.thread }.randomElement(using: &random)!
            patch.thread = thread.map { .set($0) } ?? .clear
        }
        if let thread {
            let others = drafts.count { $0.thread == thread && $0.id != draft.id }
            patch.position = .set(Int.random(in: 0...others, using: &random))
        }
        let moved = try await store.updateDraft(draft.id, patch, ifRevision: draft.revision)
        return count("move", "\(draft.id.short) \(place(of: draft)) -> \(place(of: moved))")
    }

    /// Attaches one of a few payloads to `draft`: the same bytes end up in several drafts, and
    /// attached again to one.
    private func attach(to draft: Draft, on store: EmbeddedStore) async throws -> String {
        let payload = Int.random(in: 0..<Self.payloads.count, using: &random)
        let upload = AttachmentUpload(filename: "p\(payload).bin", mimeType: "application/octet-stream")
        do {
            let added = try await store.addAttachment(to: draft.id, upload, data: Self.payloads[payload])
            return count("attach", "\(draft.id.short) p\(payload) as \(added.attachment.id.short)")
        } catch let error as PrefsError where error.code == .invalidRequest || error.code == .tooLarge {
            return count("attach", "\(draft.id.short) p\(payload) refused: \(error.message)")
        }
    }

    /// Detaches one of `draft`'s attachments, or changes its alt text.
    private func changeAttachment(of draft: Draft, on store: EmbeddedStore) async throws -> String {
        guard let attachment = draft.attachments.randomElement(using: &random) else {
            return count("detach", "nothing of \(draft.id.short): it has no attachments")
        }
        guard Bool.random(using: &random) else {
            _ = try await store.removeAttachment(attachment.id, of: draft.id, ifRevision: draft.revision)
            return count("detach", "\(attachment.id.short) of \(draft.id.short)")
        }
        let alt = ["a cat", "the sea", "a map"].randomElement(using: &random)!
        _ = try await store.updateAttachment(attachment.id, of: draft.id, AttachmentPatch(altText: .set(alt)), ifRevision: draft.revision)
        return count("alt", "\(attachment.id.short) of \(draft.id.short) \"\(alt)\"")
    }

    /// Deletes `draft`, and with it every word it showed.
    private func delete(_ draft: Draft, on store: EmbeddedStore, as writer: String) async throws -> String {
        _ = try await store.deleteDraft(draft.id, ifRevision: draft.revision)
        for range in Self.wordRanges(in: draft.text) { removed[String(draft.text[range])] = writer }
        return count("delete", "\(draft.id.short) \"\(draft.text)\"")
    }

    /// Tries to create a draft of an account beyond the devices' reach: refused by a device
    /// that knows its reach, else by the upstream once pushed (and gone from the device then).
    private func createForeign(on store: EmbeddedStore) async throws -> String {
        do {
            let draft = try await store.createDraft(DraftInput(account: Self.foreignAccount, text: "beyond reach"))
            return count("foreign", "created \(draft.id.short) of \(Self.foreignAccount)")
        } catch let error as PrefsError where error.code == .forbidden {
            return count("foreign", "refused a draft of \(Self.foreignAccount)")
        }
    }

    // MARK: Helpers

    /// The bytes attached: a few payloads of some kilobytes each, none a multiple of a chunk.
    static let payloads = (0..<3).map { index in Data((0..<(3_000 + index * 1_111)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }) }

    /// A word never typed before, by `writer`.
    private func newWord(by writer: String) -> String {
        let letter = letters[writer] ?? Array("abcdefghijklmnopqrstuvwxyz")[letters.count]
        letters[writer] = letter
        typedCount[writer, default: 0] += 1
        let word = "\(letter)\(typedCount[writer]!)"
        typed[word] = writer
        return word
    }

    /// A language tag, one of a few.
    private func randomLanguage() -> String {
        ["en", "fr", "pt-BR"].randomElement(using: &random)!
    }

    /// Counts a write of `kind`, and describes it.
    private func count(_ kind: String, _ description: String) -> String {
        counts[kind, default: 0] += 1
        return "draft \(kind) \(description)"
    }

    /// Where `draft` is, for the trace: its thread and place there.
    private func place(of draft: Draft) -> String {
        draft.thread.map { "\($0)#\(draft.position ?? -1)" } ?? "unthreaded"
    }

    /// Where the typed words are in `text`: each a letter followed by digits, up to the next
    /// letter — so that words a merge put side by side without a space are still told apart.
    static func wordRanges(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var start: String.Index?
        for index in text.indices {
            let character = text[index]
            if character.isLetter {
                if let start { ranges.append(start..<index) }
                start = index
            } else if !character.isNumber, let open = start {
                ranges.append(open..<index)
                start = nil
            }
        }
        if let start { ranges.append(start..<text.endIndex) }
        return ranges
    }

    /// The typed words in `text`.
    static func words(in text: String) -> [String] {
        wordRanges(in: text).map { String(text[$0]) }
    }
}

extension UUID {
    /// The first characters of the ID: enough to tell a schedule's drafts apart in its trace.
    var short: String { String(uuidString.prefix(8)) }
}
