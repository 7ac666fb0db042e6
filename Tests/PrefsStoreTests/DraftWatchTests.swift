import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watching drafts")
struct DraftWatchTests {
    /// The change events (no notices) a watch has seen up to revision `last`.
    func events(_ store: EmbeddedStore, _ request: WatchRequest, through last: Revision) async throws -> [ChangeEvent] {
        var request = request
        request.since = 0
        return try await collect(store.watch(request), through: last)
    }

    @Test("Draft, thread and account watches see exactly their drafts' events")
    func selectors() async throws {
        try await withStore(makeStore()) { store in
            let a1 = try await store.createDraft(DraftInput(account: "alice", text: "a1", thread: "t"))
            let a2 = try await store.createDraft(DraftInput(account: "alice", text: "a2", thread: "t"))
            let b1 = try await store.createDraft(DraftInput(account: "bob", text: "b1"))
            try await store.set("unrelated.key", to: 1)
            _ = try await store.addAttachment(to: a1.id, AttachmentUpload(filename: "x.png"), ifRevision: nil, bytes: uploadStream(sampleBytes(10)))
            var move = DraftPatch()
            move.thread = .set("u")
            _ = try await store.updateDraft(a2.id, move, ifRevision: nil)
            try await store.deleteDraft(b1.id, ifRevision: nil)
            // A marker every watch below sees last.
            let marker = try await store.createDraft(DraftInput(account: "alice", text: "m", thread: "t"))
            _ = try await store.updateDraft(marker.id, DraftPatch(), ifRevision: nil)
            _ = try await store.deleteDraft(marker.id, ifRevision: nil)
            let last = try await store.status().revision

            var a1Events: [ChangeEvent] = []
            for try await event in store.watch(WatchRequest(since: 0, draft: a1.id)) where !event.kind.isNotice {
                a1Events.append(event)
                if event.kind == .attachmentAdded { break }
            }
            #expect(a1Events.map(\.kind) == [.draftCreated, .attachmentAdded])
            #expect(a1Events.map(\.draftRevision) == [1, 2])

            let thread = try await events(store, WatchRequest(thread: "t"), through: last)
            #expect(thread.allSatisfy { $0.thread == "t" || $0.previousThread == "t" })
            #expect(thread.contains { $0.draft == a2.id.uuidString && $0.previousThread == "t" && $0.thread == "u" })
            #expect(!thread.contains { $0.account == "bob" })

            var bobEvents: [ChangeEvent] = []
            for try await event in store.watch(WatchRequest(since: 0, account: "bob")) where !event.kind.isNotice {
                bobEvents.append(event)
                if event.kind == .draftDeleted { break }
            }
            #expect(bobEvents.map(\.kind) == [.draftCreated, .draftDeleted])
            #expect(bobEvents.allSatisfy { $0.draft == b1.id.uuidString })
            // A deleted draft has no validity to report; the others say theirs.
            #expect(bobEvents.map(\.valid) == [true, nil])
        }
    }

    @Test("A compose preference that changes a draft's validation wakes its watcher, and one that does not, does not")
    func validationEvents() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice", text: "twelve chars", thread: "t"))
            let other = try await store.createDraft(DraftInput(account: "bob", text: "twelve chars"))
            let start = try await store.status().revision
            try await store.set(ComposeRules.maxCharactersKey, to: 100, scope: "/accounts/alice")  // still valid: no event
            try await store.set(ComposeRules.maxCharactersKey, to: 5, scope: "/accounts/alice/threads/t")  // invalid: event
            try await store.set(ComposeRules.maxCharactersKey, to: 5, scope: "/accounts/carol")  // not this draft's scope
            try await store.reset(ComposeRules.maxCharactersKey, scope: "/accounts/alice/threads/t", recursive: false)  // valid again
            let last = try await store.status().revision

            var seen: [ChangeEvent] = []
            for try await event in store.watch(WatchRequest(since: start, draft: draft.id)) where !event.kind.isNotice {
                seen.append(event)
                if seen.count == 2 { break }
            }
            #expect(seen.map(\.kind) == [.validation, .validation])
            #expect(seen.map(\.valid) == [false, true])
            #expect(seen.last?.revision == last)
            #expect(seen.allSatisfy { $0.draftRevision == 1 })

            // Bob's draft is outside every scope above: its account watch saw nothing.
            var bobSaw: [ChangeEvent] = []
            let bobWatch = store.watch(WatchRequest(since: start, account: "bob"))
            try await store.set(ComposeRules.maxCharactersKey, to: 3)  // global: governs Bob's draft too
            for try await event in bobWatch where !event.kind.isNotice {
                bobSaw.append(event)
                break
            }
            #expect(bobSaw.map(\.kind) == [.validation])
            #expect(bobSaw.first?.draft == other.id.uuidString)
            #expect(bobSaw.first?.revision == last + 2)  // alice's draft got its own validation event first
        }
    }
}
