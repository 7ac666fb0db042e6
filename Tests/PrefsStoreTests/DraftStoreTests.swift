import Crypto
import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// The bytes of `data` as an upload stream, in chunks of `chunk` bytes.
func uploadStream(_ data: Data, chunk: Int = 100_000) -> AsyncThrowingStream<Data, any Error> {
    AsyncThrowingStream { continuation in
        var offset = 0
        while offset < data.count {
            continuation.yield(data.subdata(in: offset..<min(offset + chunk, data.count)))
            offset += chunk
        }
        continuation.finish()
    }
}

/// Every byte of a download.
func collectBytes(_ download: AttachmentDownload) async throws -> Data {
    var data = Data()
    for try await chunk in download.bytes { data.append(chunk) }
    return data
}

/// Deterministic pseudo-random bytes.
func sampleBytes(_ count: Int, seed: UInt8 = 1) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7 &+ ($0 >> 9)) })
}

@Suite("Drafts in the store")
struct DraftStoreTests {
    @Test("Every field round-trips, and a restart finds it again")
    func roundTrip() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        var store: EmbeddedStore? = try EmbeddedStore(path: path, configuration: .forTests())
        let input = DraftInput(
            account: "alice", text: "Hello, wörld 👋🏽", thread: "t1", replyTo: "post-9", contentWarning: "spoilers",
            visibility: .unlisted, language: "pt-BR", sensitive: true,
            poll: Draft.Poll(options: ["yes", "no"], expiresIn: 3600, multiple: true))
        let created = try await store!.createDraft(input)
        #expect(created.revision == 1)
        #expect(created.position == 0)
        let read = try await store!.draft(created.id)
        #expect(read.text == input.text && read.replyTo == "post-9" && read.contentWarning == "spoilers")
        #expect(read.visibility == .unlisted && read.language == "pt-BR" && read.sensitive && read.poll == input.poll)
        #expect(abs(read.createdAt.timeIntervalSince(created.createdAt)) < 0.001)
        await store!.close()
        store = nil
        try await withStore(EmbeddedStore(path: path, configuration: .forTests())) { reopened in
            let again = try await reopened.draft(created.id)
            #expect(again.text == input.text && again.poll == input.poll && again.thread == "t1")
        }
    }

    @Test("Bad input is refused and changes nothing")
    func badInput() async throws {
        try await withStore(makeStore()) { store throws in
            let bad: [DraftInput] = [
                DraftInput(account: ""), DraftInput(account: "a/b"), DraftInput(account: "alice", thread: "x y"),
                DraftInput(account: "alice", language: "english!"), DraftInput(account: "alice", thread: "t", position: 3),
                DraftInput(account: "alice", poll: Draft.Poll(options: ["a", "b"], expiresIn: 0)),
                DraftInput(account: "alice", position: 0),
            ]
            for input in bad {
                await #expect(throws: PrefsError.self) { try await store.createDraft(input) }
            }
            #expect(try await store.drafts(account: nil, thread: nil).isEmpty)
            #expect(try await store.status().revision == 0)
            await #expect(throws: PrefsError.self) { try await store.draft(UUID()) }
        }
    }

    @Test("A stale revision is refused with the current draft, and changes nothing")
    func staleRevision() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice", text: "one"))
            var patch = DraftPatch()
            patch.text = .set("two")
            let updated = try await store.updateDraft(draft.id, patch, ifRevision: 1)
            #expect(updated.revision == 2)
            patch.text = .set("three")
            do {
                _ = try await store.updateDraft(draft.id, patch, ifRevision: 1)
                Issue.record("a stale revision must be refused")
            } catch let error as PrefsError {
                #expect(error.code == .staleRevision)
                #expect(error.currentDraft?.text == "two")
            }
            await #expect(throws: PrefsError.self) { try await store.deleteDraft(draft.id, ifRevision: 1) }
            #expect(try await store.draft(draft.id).text == "two")
            patch.contentWarning = .set("cw")
            patch.text = .unchanged
            let cleared = try await store.updateDraft(draft.id, patch, ifRevision: nil)
            #expect(cleared.contentWarning == "cw")
            patch.contentWarning = .clear
            #expect(try await store.updateDraft(draft.id, patch, ifRevision: 3).contentWarning == nil)
        }
    }

    @Test("Attachment bytes come back identical; shared bytes are freed with the last reference")
    func attachments() async throws {
        try await withStore(makeStore()) { store in
            let first = try await store.createDraft(DraftInput(account: "alice", text: "with media"))
            let second = try await store.createDraft(DraftInput(account: "alice", text: "same media"))
            let bytes = sampleBytes(700_000)
            let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()

            let added = try await store.addAttachment(
                to: first.id, AttachmentUpload(filename: "../../etc/cat.png", altText: "a cat"), ifRevision: 1,
                bytes: uploadStream(bytes))
            #expect(added.attachment.filename == "cat.png")
            #expect(added.attachment.kind == .image && added.attachment.mimeType == "image/png")
            #expect(added.attachment.sha256 == digest && added.attachment.byteSize == 700_000)
            #expect(added.draft.revision == 2)
            let shared = try await store.addAttachment(
                to: second.id, AttachmentUpload(filename: "copy.png"), ifRevision: nil, bytes: uploadStream(bytes, chunk: 4096))
            #expect(shared.attachment.sha256 == digest)
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob") == "1")

            #expect(try await collectBytes(store.attachmentData(added.attachment.id, of: first.id)) == bytes)
            try await store.deleteDraft(first.id, ifRevision: nil)
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob") == "1")
            #expect(try await collectBytes(store.attachmentData(shared.attachment.id, of: second.id)) == bytes)
            _ = try await store.removeAttachment(shared.attachment.id, of: second.id, ifRevision: nil)
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob") == "0")
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob_chunk") == "0")
        }
    }

    @Test("Over the size limit: too_large, and nothing kept")
    func tooLarge() async throws {
        try await withStore(makeStore { $0.maximumAttachmentBytes = 1000 }) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            do {
                _ = try await store.addAttachment(to: draft.id, AttachmentUpload(filename: "big.bin"), ifRevision: nil, bytes: uploadStream(sampleBytes(5000), chunk: 300))
                Issue.record("an upload over the limit must be refused")
            } catch let error as PrefsError {
                #expect(error.code == .tooLarge)
            }
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob") == "0")
            #expect(try await store.draft(draft.id).revision == 1)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: store.path + ".uploads")
            #expect(leftovers.isEmpty)
        }
    }

    @Test("Attachments reorder densely and take alt text")
    func attachmentPatch() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            var ids: [UUID] = []
            for index in 0..<3 {
                ids.append(try await store.addAttachment(
                    to: draft.id, AttachmentUpload(filename: "f\(index).jpg"), ifRevision: nil, bytes: uploadStream(sampleBytes(10, seed: UInt8(index)))
                ).attachment.id)
            }
            let moved = try await store.updateAttachment(ids[2], of: draft.id, AttachmentPatch(altText: .set("third"), position: .set(0)), ifRevision: 4)
            #expect(moved.draft.attachments.map(\.id) == [ids[2], ids[0], ids[1]])
            #expect(moved.draft.attachments.map(\.position) == [0, 1, 2])
            #expect(moved.attachment.altText == "third")
            // Alt text alone, in place: stored, not only answered.
            let described = try await store.updateAttachment(ids[0], of: draft.id, AttachmentPatch(altText: .set("first")), ifRevision: 5)
            #expect(try await store.draft(draft.id) == described.draft)
            #expect(try await store.draft(draft.id).attachments.map(\.altText) == ["third", "first", nil])
            _ = try await store.updateAttachment(ids[2], of: draft.id, AttachmentPatch(altText: .clear), ifRevision: 6)
            #expect(try await store.draft(draft.id).attachments.map(\.altText) == [nil, "first", nil])
            await #expect(throws: PrefsError.self) {
                try await store.updateAttachment(ids[0], of: draft.id, AttachmentPatch(position: .set(7)), ifRevision: nil)
            }
        }
    }

    @Test("Threads keep dense positions through inserts, reorders, moves and deletes")
    func threads() async throws {
        try await withStore(makeStore()) { store in
            var drafts: [Draft] = []
            for index in 0..<4 { drafts.append(try await store.createDraft(DraftInput(account: "alice", text: "d\(index)", thread: "t"))) }
            let inserted = try await store.createDraft(DraftInput(account: "alice", text: "first", thread: "t", position: 0))
            func order(_ thread: String) async throws -> [String] { try await store.thread(thread).map(\.text) }
            #expect(try await order("t") == ["first", "d0", "d1", "d2", "d3"])
            #expect(try await store.thread("t").map(\.position) == [0, 1, 2, 3, 4])

            var patch = DraftPatch()
            patch.position = .set(4)
            _ = try await store.updateDraft(inserted.id, patch, ifRevision: nil)
            #expect(try await order("t") == ["d0", "d1", "d2", "d3", "first"])

            var move = DraftPatch()
            move.thread = .set("u")
            _ = try await store.updateDraft(drafts[1].id, move, ifRevision: nil)
            #expect(try await order("t") == ["d0", "d2", "d3", "first"])
            #expect(try await store.thread("t").map(\.position) == [0, 1, 2, 3])
            #expect(try await order("u") == ["d1"])

            try await store.deleteDraft(drafts[0].id, ifRevision: nil)
            #expect(try await store.thread("t").map(\.position) == [0, 1, 2])
            var out = DraftPatch()
            out.thread = .clear
            let alone = try await store.updateDraft(drafts[2].id, out, ifRevision: nil)
            #expect(alone.thread == nil && alone.position == nil)
            #expect(try await order("t") == ["d3", "first"])

            await #expect(throws: PrefsError.self) { try await store.thread("nope") }
            await #expect(throws: PrefsError.self) { try await store.createDraft(DraftInput(account: "bob", thread: "t")) }
            await #expect(throws: PrefsError.self) { try await store.createDraft(DraftInput(account: "alice", thread: "t", position: 9)) }
        }
    }

    @Test("Validation follows the text, the attachments and the compose preferences at the draft's scope")
    func validation() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice", text: String(repeating: "é", count: 10), thread: "t"))
            #expect(try await store.validation(of: draft.id).valid)

            try await store.set(ComposeRules.maxCharactersKey, to: 5, scope: "/accounts/alice")
            let tooLong = try await store.validation(of: draft.id)
            #expect(!tooLong.valid && tooLong.problems.map(\.code) == ["too_long"])
            try await store.set(ComposeRules.maxCharactersKey, to: 20, scope: "/accounts/alice/threads/t")
            #expect(try await store.validation(of: draft.id).valid)

            try await store.set(ComposeRules.requireAltTextKey, to: true)
            _ = try await store.addAttachment(to: draft.id, AttachmentUpload(filename: "v.mp4"), ifRevision: nil, bytes: uploadStream(sampleBytes(10)))
            let added = try await store.addAttachment(to: draft.id, AttachmentUpload(filename: "i.png", altText: "ok"), ifRevision: nil, bytes: uploadStream(sampleBytes(11)))
            #expect(Set(try await store.validation(of: draft.id).problems.map(\.code)) == ["missing_alt_text", "mixed_media"])
            _ = try await store.removeAttachment(added.attachment.id, of: draft.id, ifRevision: nil)
            var patch = DraftPatch()
            patch.poll = .set(Draft.Poll(options: ["only"], expiresIn: 60))
            _ = try await store.updateDraft(draft.id, patch, ifRevision: nil)
            #expect(Set(try await store.validation(of: draft.id).problems.map(\.code)) == ["missing_alt_text", "poll_options_count", "poll_with_attachments"])
        }
    }
}
