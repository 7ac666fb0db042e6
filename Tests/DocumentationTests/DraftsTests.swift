import Foundation
import Observation
import PrefsEngine
import PrefsKit
import PrefsStore
import Testing

@MainActor @Observable final class ThreadModel {
    @ObservationIgnored @DraftObserving var draft: DraftSnapshot?
    @ObservationIgnored @ThreadObserving var thread: [DraftSnapshot]

    init(draftID: UUID, threadID: String) {
        _draft = DraftObserving(draftID)
        _thread = ThreadObserving(threadID)
    }
}

/// The code of "Drafts, Attachments and Threads" (`Drafts.md`), in the article's order.
@Suite(.timeLimit(.minutes(5))) struct DraftsTests {
    @MainActor @Test func theArticleRunsAsItSays() async throws {
        let prefs: any PrefsService = try EmbeddedStore.temporary()

        let first = try await prefs.createDraft(DraftInput(account: "alice", text: "A thread about prefsd", thread: "t1"))
        let second = try await prefs.createDraft(DraftInput(account: "alice", text: "It keeps drafts", thread: "t1"))
        // first.position == 0, second.position == 1: a new draft goes to the end of its thread
        #expect(first.position == 0)
        #expect(second.position == 1)

        let added = try await prefs.addAttachment(
            to: second.id, AttachmentUpload(filename: "notes.txt", altText: "The talk's notes"), data: Data("prefsd notes".utf8))
        let download = try await prefs.attachmentData(added.attachment.id, of: second.id)
        var bytes = Data()
        for try await piece in download.bytes { bytes += piece }
        // added.draft.revision == 2, bytes == Data("prefsd notes".utf8)
        #expect(added.draft.revision == 2)
        #expect(bytes == Data("prefsd notes".utf8))

        var patch = DraftPatch()
        patch.text = .set("It keeps drafts, and their attachments")
        let edited = try await prefs.updateDraft(second.id, patch, ifRevision: added.draft.revision)
        var stale: PrefsError?
        do {
            _ = try await prefs.updateDraft(second.id, patch, ifRevision: added.draft.revision)
        } catch let error as PrefsError where error.code == .staleRevision {
            stale = error                                        // nothing changed; apply to the current draft
        }
        #expect(stale != nil)
        #expect(try await prefs.draft(second.id).revision == edited.revision)

        try await prefs.set(ComposeRules.maxCharactersKey, to: 25, scope: "/accounts/alice/threads/t1")
        let validation = try await prefs.validation(of: edited.id)
        // validation.valid == false, validation.problems.map(\.code) == ["too_long"]
        #expect(validation.valid == false)
        #expect(validation.problems.map(\.code) == ["too_long"])

        let followed = try await withPrefs(prefs, scope: "/accounts/alice") {
            let model = ThreadModel(draftID: edited.id, threadID: "t1")
            try await model.$draft.loaded(timeout: .seconds(10))
            try await model.$thread.loaded(timeout: .seconds(10))
            return (model.thread.map(\.draft.text), model.draft?.validation.valid)
        }
        // followed == (["A thread about prefsd", "It keeps drafts, and their attachments"], false)
        #expect(followed.0 == ["A thread about prefsd", "It keeps drafts, and their attachments"])
        #expect(followed.1 == false)

        try await prefs.deleteDraft(first.id, ifRevision: nil)          // the thread closes up
        var kinds: [ChangeEvent.Kind] = []
        for try await event in prefs.watch(WatchRequest(since: 0, thread: "t1")) where !event.kind.isNotice {
            kinds.append(event.kind)
            if event.kind == .draftDeleted { break }
        }
        // kinds: draftCreated twice, attachmentAdded, draftUpdated, validation, …, draftDeleted
        #expect(Array(kinds.prefix(5)) == [.draftCreated, .draftCreated, .attachmentAdded, .draftUpdated, .validation])
        #expect(kinds.last == .draftDeleted)
        #expect(try await prefs.thread("t1").map(\.position) == [0])
        await (prefs as? EmbeddedStore)?.close()
    }
}
