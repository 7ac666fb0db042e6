import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import Testing

/// Drafts across devices, each rule on a small scene: an upstream and two replicas in one
/// process, exchanging directly (``SyncBench``).
@Suite("Draft sync")
struct DraftSyncTests {
    static let first = "Morning walk by the river, the light low and gold over the water."
    static let second = "Lunch at the market with friends, bread and cheese in the sun."
    static let text = first + "\n\n" + second

    /// A bench with a laptop and a desktop of alice, in step, and a draft of alice's made on the
    /// laptop that both have.
    func benchWithDraft() async throws -> (SyncBench, EmbeddedStore, EmbeddedStore, Draft) {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: Self.text, thread: "trip"))
        try await bench.syncAll()
        return (bench, laptop, desktop, draft)
    }

    @Test("a draft made on one device reaches the other, its watchers told, and an edit comes back")
    func draftTravels() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        try await bench.syncAll()
        var events = desktop.watch(WatchRequest(account: "alice")).makeAsyncIterator()
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: "Hello", thread: "t", language: "en"))
        try await bench.sync("laptop")
        try await bench.sync("desktop")
        let there = try await desktop.draft(draft.id)
        #expect(there.text == "Hello" && there.thread == "t" && there.language == "en")
        #expect(try await bench.upstream.draft(draft.id).text == "Hello")
        let event = try await events.next()
        #expect(event?.kind == .draftCreated && event?.draft == draft.id.uuidString)
        var patch = DraftPatch()
        patch.text = .set("Hello, world")
        _ = try await desktop.updateDraft(draft.id, patch, ifRevision: nil)
        try await bench.syncAll()
        #expect(try await laptop.draft(draft.id).text == "Hello, world")
        #expect(try await bench.upstream.conflicts(ConflictQuery()).isEmpty)
        await bench.close()
    }

    @Test("edits of different paragraphs and fields on two devices both survive; the merge is recorded")
    func differentPartsMerge() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        var onLaptop = DraftPatch()
        onLaptop.text = .set(Self.first.replacingOccurrences(of: "Morning", with: "Early morning") + "\n\n" + Self.second)
        onLaptop.contentWarning = .set("food")
        _ = try await laptop.updateDraft(draft.id, onLaptop, ifRevision: nil)
        bench.time.advance(by: 1_000)
        var onDesktop = DraftPatch()
        onDesktop.text = .set(Self.first + "\n\n" + Self.second.replacingOccurrences(of: "friends", with: "old friends"))
        onDesktop.language = .set("en")
        _ = try await desktop.updateDraft(draft.id, onDesktop, ifRevision: nil)
        try await bench.sync("laptop")
        try await bench.sync("desktop")
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            let merged = try await store.draft(draft.id)
            #expect(merged.text.contains("Early morning") && merged.text.contains("old friends"), "\(merged.text)")
            #expect(merged.contentWarning == "food" && merged.language == "en")
            #expect(try await store.drafts(account: "alice", thread: nil).count == 1)
        }
        let conflicts = try await bench.upstream.conflicts(ConflictQuery())
        #expect(conflicts.map(\.rule) == [.draftMerge])
        #expect(conflicts.first?.key == "draft:\(draft.id.uuidString)" && conflicts.first?.losers.first?.device == "desktop")
        await bench.close()
    }

    @Test("two devices changing the same words: one text stays, the other is a conflicted copy in the same thread")
    func sameWordsMakeACopy() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        var onLaptop = DraftPatch()
        onLaptop.text = .set(Self.text.replacingOccurrences(of: "low and gold", with: "pale and silver"))
        _ = try await laptop.updateDraft(draft.id, onLaptop, ifRevision: nil)
        var onDesktop = DraftPatch()
        onDesktop.text = .set(Self.text.replacingOccurrences(of: "low and gold", with: "red as fire"))
        _ = try await desktop.updateDraft(draft.id, onDesktop, ifRevision: nil)
        try await bench.sync("laptop")
        try await bench.sync("desktop")
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            let thread = try await store.drafts(account: "alice", thread: "trip")
            #expect(thread.count == 2)
            let original = try #require(thread.first { $0.id == draft.id })
            let copy = try #require(thread.first { $0.id != draft.id })
            #expect(original.text.contains("pale and silver"))
            #expect(copy.text.contains("red as fire") && copy.conflictOf == draft.id)
            #expect(copy.position == (original.position ?? 0) + 1)
        }
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery()).first)
        #expect(conflict.rule == .conflictedCopy && conflict.detail?.contains("conflicted copy") == true)
        // The replicas keep the conflict too.
        #expect(try await laptop.conflicts(ConflictQuery()).map(\.revision) == [conflict.revision])
        await bench.close()
    }

    @Test("an edit beats a delete: the draft comes back, marked, whichever device synced first")
    func editBeatsDelete() async throws {
        for deleterFirst in [true, false] {
            let (bench, laptop, desktop, draft) = try await benchWithDraft()
            try await laptop.deleteDraft(draft.id, ifRevision: nil)
            var patch = DraftPatch()
            patch.text = .set(Self.text + " Then home.")
            _ = try await desktop.updateDraft(draft.id, patch, ifRevision: nil)
            for device in deleterFirst ? ["laptop", "desktop"] : ["desktop", "laptop"] { try await bench.sync(device) }
            try await bench.syncAll()
            for store in [bench.upstream, laptop, desktop] {
                let back = try await store.draft(draft.id)
                #expect(back.text.hasSuffix("Then home."), "deleter first: \(deleterFirst)")
            }
            #expect(try await bench.upstream.draft(draft.id).deletedElsewhere == (deleterFirst ? true : nil))
            #expect(try await bench.upstream.conflicts(ConflictQuery()).map(\.rule) == [.editBeatsDelete])
            await bench.close()
        }
    }

    @Test("a merge's loser can be put back: the draft becomes what the device pushed, on every device")
    func restoreALoser() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        var onLaptop = DraftPatch()
        onLaptop.visibility = .set(.direct)
        _ = try await laptop.updateDraft(draft.id, onLaptop, ifRevision: nil)
        bench.time.advance(by: 1_000)
        var onDesktop = DraftPatch()
        onDesktop.visibility = .set(.unlisted)
        onDesktop.text = .set(Self.text + " Desktop's.")
        _ = try await desktop.updateDraft(draft.id, onDesktop, ifRevision: nil)
        try await bench.sync("desktop")
        try await bench.sync("laptop")
        try await bench.syncAll()
        // The desktop's later visibility won; the laptop's change is the loser.
        #expect(try await bench.upstream.draft(draft.id).visibility == .unlisted)
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery()).first)
        #expect(conflict.draft == draft.id && conflict.rule == .draftMerge && conflict.losers.first?.device == "laptop")
        _ = try await laptop.restoreLoser(ofConflict: conflict.revision, loser: 0)
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            let restored = try await store.draft(draft.id)
            #expect(restored.visibility == .direct && restored.text == Self.text, "\(restored)")
        }
        await bench.close()
    }

    @Test("a long draft's edit goes as a splice both ways: up as an edit of the base, down as steps from the device's revision")
    func longDraftEditsTravelAsSplices() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        let long = (0..<400).map { "word\($0)" }.joined(separator: " ")
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: long))
        try await bench.syncAll()
        let first = long.replacingOccurrences(of: "word200 ", with: "changed ")
        var patch = DraftPatch()
        patch.text = .set(first)
        _ = try await laptop.updateDraft(draft.id, patch, ifRevision: nil)
        patch.text = .set(long.replacingOccurrences(of: "word200 ", with: "changed again "))
        _ = try await laptop.updateDraft(draft.id, patch, ifRevision: nil)
        // Up: the text is an edit of the base's (the first change: the second waits for its answer).
        let request = try #require(laptop.syncRequest(pushing: true))
        let pushed = try #require(request.drafts.first)
        #expect(pushed.draft?.text == "" && pushed.textEdit == TextSplice(from: long, to: first), "\(String(describing: pushed.textEdit))")
        #expect(try WireJSON.encoder().encode(request).count < 1_000)
        try await bench.sync("laptop")
        #expect(try await bench.upstream.draft(draft.id).text == patch.text.applied(to: nil))
        // Down: the desktop is sent the text as steps from the revision it has.
        let pull = try #require(desktop.syncRequest(pushing: false))
        let answer = try await bench.upstream.exchange(pull, grant: bench.replicas["desktop"]!.transport.grant, context: WriteContext())
        let state = try #require(answer.drafts?.first)
        #expect(state.draft?.text == "" && state.text?.steps.count == 2, "\(String(describing: state.text))")
        #expect(try WireJSON.encoder().encode(answer).count < 1_500)
        try await desktop.takeIn(answer)
        #expect(try await desktop.draft(draft.id).text == patch.text.applied(to: nil))
        await bench.close()
    }

    @Test("a draft the upstream refuses (a thread of another account's) is kept as a conflict's loser, not dropped")
    func refusedDraftIsKept() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        _ = try await bench.upstream.createDraft(DraftInput(account: "bob", text: "bob's", thread: "shared"))
        try await bench.syncAll()
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: "Mine, in bob's thread", thread: "shared"))
        try await bench.syncAll()
        await #expect(throws: PrefsError.self) { try await bench.upstream.draft(draft.id) }
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery()).first)
        #expect(conflict.rule == .refused && conflict.draft == draft.id && conflict.detail?.contains("belongs to account 'bob'") == true)
        let loser = try #require(conflict.losers.first?.value)
        #expect(try WireJSON.decode(Draft.self, from: loser.canonicalData).text == "Mine, in bob's thread")
        // The device holds the conflict too, and nothing waits to be pushed.
        #expect(try await laptop.conflicts(ConflictQuery()).map(\.revision) == [conflict.revision])
        #expect(laptop.replicaStatus?.outbox == 0)
        await bench.close()
    }

    @Test("an attachment's bytes go up once before the draft that uses them and come down to the other device when read")
    func attachmentsTravel() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let upload = AttachmentUpload(filename: "notes.bin", mimeType: "application/octet-stream")
        let added = try await laptop.addAttachment(to: draft.id, upload, data: bytes)
        try await bench.syncAll()
        let there = try #require(try await desktop.draft(draft.id).attachments.first)
        #expect(there.id == added.attachment.id && there.sha256 == added.attachment.sha256)
        // The desktop knows of the attachment; its bytes come down only when it is read.
        #expect(bench.replicas["desktop"]!.transport.blobBytes.withLock { $0.down } == 0)
        bench.replicas["desktop"]!.transport.online.withLock { $0 = false }
        await #expect { try await desktop.attachmentData(there.id, of: draft.id) } throws: { ($0 as? PrefsError)?.code == .unreachable }
        bench.replicas["desktop"]!.transport.online.withLock { $0 = true }
        // Bytes that come down wrong end the read that fetched them with an error, whole as
        // they seem, and are not kept.
        bench.replicas["desktop"]!.transport.tampers.withLock { $0 = true }
        await #expect { try await Self.read(there.id, of: draft.id, on: desktop) } throws: { ($0 as? PrefsError)?.code == .digestMismatch }
        bench.replicas["desktop"]!.transport.tampers.withLock { $0 = false }
        bench.replicas["desktop"]!.transport.blobBytes.withLock { $0.down = 0 }
        // Two reads at once fetch once; a third reads what was stored.
        async let oneRead = Self.read(there.id, of: draft.id, on: desktop)
        async let anotherRead = Self.read(there.id, of: draft.id, on: desktop)
        #expect(try await [oneRead, anotherRead] == [bytes, bytes])
        #expect(try await Self.read(there.id, of: draft.id, on: desktop) == bytes)
        #expect(bench.replicas["laptop"]!.transport.blobBytes.withLock { $0.up } == Int64(bytes.count))
        #expect(bench.replicas["desktop"]!.transport.blobBytes.withLock { $0.down } == Int64(bytes.count))
        // The same bytes in a second draft, and attached again: they do not cross the wire again.
        let second = try await laptop.createDraft(DraftInput(account: "alice", text: "again"))
        _ = try await laptop.addAttachment(to: second.id, upload, data: bytes)
        _ = try await laptop.addAttachment(to: draft.id, upload, data: bytes)
        try await bench.syncAll()
        #expect(try await bench.upstream.draft(draft.id).attachments.count == 2)
        #expect(try await desktop.draft(second.id).attachments.first?.sha256 == added.attachment.sha256)
        #expect(bench.replicas["laptop"]!.transport.blobBytes.withLock { $0.up } == Int64(bytes.count))
        #expect(bench.replicas["desktop"]!.transport.blobBytes.withLock { $0.down } == Int64(bytes.count))
        // A detach and an alt text travel too.
        _ = try await desktop.removeAttachment(added.attachment.id, of: draft.id, ifRevision: nil)
        try await bench.syncAll()
        #expect(try await laptop.draft(draft.id).attachments.map(\.id) == (try await bench.upstream.draft(draft.id).attachments.map(\.id)))
        #expect(try await laptop.draft(draft.id).attachments.count == 1)
        await bench.close()
    }

    /// The whole of an attachment's bytes as `store` reads them.
    static func read(_ attachment: UUID, of draft: UUID, on store: EmbeddedStore) async throws -> Data {
        var read = Data()
        for try await chunk in try await store.attachmentData(attachment, of: draft).bytes { read.append(chunk) }
        return read
    }

    @Test("a device that never read an attachment edits its draft and keeps it, and detaches it without fetching it")
    func unreadAttachmentsStay() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        let upload = AttachmentUpload(filename: "notes.bin", mimeType: "application/octet-stream")
        let added = try await laptop.addAttachment(to: draft.id, upload, data: Data(repeating: 7, count: 50_000))
        try await bench.syncAll()
        var edit = DraftPatch()
        edit.text = .set(Self.text + " Edited on the desktop.")
        _ = try await desktop.updateDraft(draft.id, edit, ifRevision: nil)
        try await bench.syncAll()
        #expect(try await bench.upstream.draft(draft.id).attachments.map(\.id) == [added.attachment.id])
        #expect(try await laptop.draft(draft.id).text.hasSuffix("Edited on the desktop."))
        _ = try await desktop.removeAttachment(added.attachment.id, of: draft.id, ifRevision: nil)
        try await bench.syncAll()
        #expect(try await bench.upstream.draft(draft.id).attachments.isEmpty)
        #expect(try await laptop.draft(draft.id).attachments.isEmpty)
        #expect(bench.replicas["desktop"]!.transport.blobBytes.withLock { $0.down } == 0)
        await bench.close()
    }

    @Test("an edit brings back a draft deleted with its attachment's bytes: its text returns, the attachment it never added does not")
    func editBringsBackADraftWhoseBytesWent() async throws {
        let (bench, laptop, _, draft) = try await benchWithDraft()
        // An attachment added on the upstream itself (no uploader keeps its bytes), then the
        // draft deleted there: the bytes go with it.
        let upload = AttachmentUpload(filename: "notes.bin", mimeType: "application/octet-stream")
        _ = try await bench.upstream.addAttachment(to: draft.id, upload, data: Data(repeating: 3, count: 10_000))
        try await bench.sync("laptop")
        #expect(try await laptop.draft(draft.id).attachments.count == 1)
        _ = try await bench.upstream.deleteDraft(draft.id, ifRevision: nil)
        var edit = DraftPatch()
        edit.text = .set(Self.text + " Written offline.")
        _ = try await laptop.updateDraft(draft.id, edit, ifRevision: nil)
        try await bench.syncAll()
        let back = try await bench.upstream.draft(draft.id)
        #expect(back.text.hasSuffix("Written offline.") && back.deletedElsewhere == true && back.attachments.isEmpty)
        #expect(try await laptop.draft(draft.id).attachments.isEmpty)
        #expect(try await bench.upstream.conflicts(ConflictQuery()).map(\.rule) == [.editBeatsDelete])
        await bench.close()
    }

    @Test("an attachment detached and its bytes attached again offline keeps the bytes on every store")
    func reattachedBytesStay() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let upload = AttachmentUpload(filename: "notes.bin", mimeType: "application/octet-stream")
        let first = try await laptop.addAttachment(to: draft.id, upload, data: bytes)
        try await bench.syncAll()
        bench.replicas["laptop"]!.transport.online.withLock { $0 = false }
        _ = try await laptop.removeAttachment(first.attachment.id, of: draft.id, ifRevision: nil)
        let again = try await laptop.addAttachment(to: draft.id, upload, data: bytes)
        bench.replicas["laptop"]!.transport.online.withLock { $0 = true }
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            #expect(try await store.draft(draft.id).attachments.map(\.id) == [again.attachment.id])
            var read = Data()
            for try await chunk in try await store.attachmentData(again.attachment.id, of: draft.id).bytes { read.append(chunk) }
            #expect(read == bytes)
        }
        await bench.close()
    }

    @Test("a delete travels to a device that did not change the draft")
    func deleteTravels() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        try await laptop.deleteDraft(draft.id, ifRevision: nil)
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            await #expect(throws: PrefsError.self) { try await store.draft(draft.id) }
        }
        await bench.close()
    }

    @Test("a push whose answer was lost is taken in once, and an edit made meanwhile follows it")
    func lostAnswerThenEdit() async throws {
        let (bench, laptop, desktop, draft) = try await benchWithDraft()
        var first = DraftPatch()
        first.text = .set(Self.text + " One.")
        _ = try await laptop.updateDraft(draft.id, first, ifRevision: nil)
        // Pushed and applied, but the answer never arrives.
        let request = try #require(laptop.syncRequest(pushing: true))
        #expect(request.drafts.count == 1)
        _ = try await bench.upstream.exchange(request, grant: bench.replicas["laptop"]!.transport.grant, context: WriteContext())
        var second = DraftPatch()
        second.text = .set(Self.text + " One. Two.")
        _ = try await laptop.updateDraft(draft.id, second, ifRevision: nil)
        // Only the first is in flight: the second waits for its answer.
        #expect(laptop.syncRequest(pushing: true)?.drafts.map(\.seq) == request.drafts.map(\.seq))
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            #expect(try await store.draft(draft.id).text == Self.text + " One. Two.")
            #expect(try await store.drafts(account: "alice", thread: nil).count == 1)
        }
        #expect(try await bench.upstream.conflicts(ConflictQuery()).isEmpty)
        await bench.close()
    }

    /// The upstream's answer to `request`, sent by `device` (which has yet to take it in).
    func serve(_ request: SyncRequest, from device: String, on bench: SyncBench) async throws -> SyncAnswer {
        try await bench.upstream.exchange(request, grant: bench.replicas[device]!.transport.grant, context: WriteContext())
    }

    /// Every store's drafts of alice, their revisions and times aside: what the stores agree on.
    func agreedDrafts(_ bench: SyncBench) async throws -> [[Draft]] {
        var all: [[Draft]] = []
        for store in [bench.upstream] + bench.replicas.keys.sorted().map({ bench.replicas[$0]!.store }) {
            all.append(
                try await store.drafts(account: "alice", thread: nil).map { draft in
                    var draft = draft
                    draft.revision = 0
                    (draft.createdAt, draft.updatedAt) = (.distantPast, .distantPast)
                    return draft
                })
        }
        return all
    }

    @Test("a draft moved on two devices: the other drafts of its thread end where the upstream put them, on both")
    func neighboursOfAMoveSettle() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        var drafts: [Draft] = []
        for text in ["a", "f", "d", "g"] {
            drafts.append(try await laptop.createDraft(DraftInput(account: "alice", text: text, thread: "trip")))
        }
        try await bench.syncAll()
        // The laptop moves d first (a and f move down, here), the desktop a moment later last.
        var first = DraftPatch()
        first.position = .set(0)
        _ = try await laptop.updateDraft(drafts[2].id, first, ifRevision: nil)
        bench.time.advance(by: 1_000)
        var last = DraftPatch()
        last.position = .set(3)
        _ = try await desktop.updateDraft(drafts[2].id, last, ifRevision: nil)
        try await bench.sync("desktop")
        try await bench.syncAll()
        // The later move stands. a and f did not change upstream: only the answer to the
        // laptop's move can tell the laptop where they are.
        let stores = try await agreedDrafts(bench)
        #expect(stores[0].map(\.text) == ["a", "f", "g", "d"] && stores[0].map(\.position) == [0, 1, 2, 3])
        for store in stores.dropFirst() { #expect(store == stores[0]) }
        await bench.close()
    }

    @Test("a conflicted copy a replica makes of a draft moved out of its thread elsewhere is out of threads too")
    func replicaCopyOfDraftMovedOutOfThread() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: "one two", thread: "trip"))
        _ = try await laptop.createDraft(DraftInput(account: "alice", text: "other", thread: "trip"))
        try await bench.syncAll()
        var first = DraftPatch()
        first.text = .set("zero one two")
        _ = try await laptop.updateDraft(draft.id, first, ifRevision: nil)
        let request = try #require(laptop.syncRequest(pushing: true))
        // While it is on its way: the laptop changes a word and moves the draft down its thread; the desktop
        // changes the same word and takes the draft out of the thread.
        var second = DraftPatch()
        second.text = .set("zero one 2")
        second.position = .set(1)
        _ = try await laptop.updateDraft(draft.id, second, ifRevision: nil)
        bench.time.advance(by: 1_000)
        var elsewhere = DraftPatch()
        elsewhere.text = .set("one deux")
        elsewhere.thread = .clear
        _ = try await desktop.updateDraft(draft.id, elsewhere, ifRevision: nil)
        try await bench.sync("desktop")
        // The answer to the first change: the second is rebased on it, its text a conflicted copy.
        try await laptop.takeIn(try await serve(request, from: "laptop", on: bench))
        try await bench.syncAll()
        let stores = try await agreedDrafts(bench)
        let merged = try #require(stores[0].first { $0.id == draft.id })
        let copy = try #require(stores[0].first { $0.conflictOf == draft.id })
        #expect(merged.text == "zero one deux" && merged.thread == nil && merged.position == nil)
        #expect(copy.text == "zero one 2" && copy.thread == nil && copy.position == nil)
        for store in stores.dropFirst() { #expect(store == stores[0]) }
        await bench.close()
    }

    @Test("a conflicted copy a replica makes goes next to its draft in the thread as the replica has it")
    func replicaCopyInLongerThread() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: "one two", thread: "trip"))
        try await bench.syncAll()
        var first = DraftPatch()
        first.text = .set("zero one two")
        _ = try await laptop.updateDraft(draft.id, first, ifRevision: nil)
        let request = try #require(laptop.syncRequest(pushing: true))
        var second = DraftPatch()
        second.text = .set("zero one 2")
        _ = try await laptop.updateDraft(draft.id, second, ifRevision: nil)
        // Meanwhile the desktop puts two drafts before it (the laptop has not heard of them when
        // the answer comes: the upstream's place of the draft is past the laptop's thread).
        for text in ["e", "f"] { _ = try await desktop.createDraft(DraftInput(account: "alice", text: text, thread: "trip", position: 0)) }
        var same = DraftPatch()
        same.text = .set("one deux")
        _ = try await desktop.updateDraft(draft.id, same, ifRevision: nil)
        try await bench.sync("desktop")
        try await laptop.takeIn(try await serve(request, from: "laptop", on: bench))
        try await bench.syncAll()
        let stores = try await agreedDrafts(bench)
        #expect(stores[0].map(\.position) == [0, 1, 2, 3])
        #expect(stores[0].contains { $0.conflictOf == draft.id && $0.text == "zero one 2" && $0.thread == "trip" })
        for store in stores.dropFirst() { #expect(store == stores[0]) }
        // The copy the laptop made is a conflict on the upstream, as one the upstream makes is.
        let conflicts = try await bench.upstream.conflicts(ConflictQuery()).filter { $0.rule == .conflictedCopy }
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.draft == draft.id && conflicts.first?.losers.first?.device == "laptop")
        await bench.close()
    }

    @Test("a field two devices changed keeps the later change, even when the earlier one was rebased on a replica")
    func rebasedFieldKeepsTheLaterChange() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        let draft = try await laptop.createDraft(DraftInput(account: "alice", text: "one"))
        try await bench.syncAll()
        var first = DraftPatch()
        first.text = .set("one two")
        _ = try await laptop.updateDraft(draft.id, first, ifRevision: nil)
        let request = try #require(laptop.syncRequest(pushing: true))
        // While it is on its way, the laptop sets the language; a second later, the desktop sets
        // another.
        var english = DraftPatch()
        english.language = .set("en")
        _ = try await laptop.updateDraft(draft.id, english, ifRevision: nil)
        bench.time.advance(by: 1_000)
        var french = DraftPatch()
        french.language = .set("fr")
        _ = try await desktop.updateDraft(draft.id, french, ifRevision: nil)
        try await bench.sync("desktop")
        try await laptop.takeIn(try await serve(request, from: "laptop", on: bench))
        try await bench.syncAll()
        let stores = try await agreedDrafts(bench)
        for store in stores.dropFirst() { #expect(store == stores[0]) }
        // The rebase on the answer to the first change resolves the language by the upstream's
        // stamps (the answer carries them): the desktop's later change stands, as it would have
        // had the laptop's change been pushed with nothing in flight before it.
        #expect(stores[0].first?.language == "fr")
        await bench.close()
    }

    @Test("a device's drafts stay within its token's scope")
    func draftsStayWithinScope() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        _ = try await bench.upstream.createDraft(DraftInput(account: "bob", text: "bob's"))
        _ = try await bench.upstream.createDraft(DraftInput(account: "alice", text: "alice's"))
        try await bench.syncAll()
        #expect(try await laptop.drafts(account: nil, thread: nil).map(\.text) == ["alice's"])
        await #expect(throws: PrefsError.self) { try await laptop.createDraft(DraftInput(account: "bob", text: "no")) }
        #expect(laptop.replicaStatus?.outbox == 0)
        await bench.close()
    }
}
