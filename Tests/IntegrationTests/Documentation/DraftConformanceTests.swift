import Foundation
import PrefsClient
import PrefsKit
import PrefsPostgres
import PrefsStore
import TestHarness
import Testing

/// One drafts scenario against `EmbeddedStore` and against the daemon through `PrefsClient`:
/// the same drafts, errors, validations and events, once ids and times are set aside.
@Suite struct DraftConformanceTests {
    struct Transcript: Equatable {
        var drafts: [Draft] = []
        var errors: [PrefsError.Code] = []
        var validations: [DraftValidation] = []
        var bytes: [Data] = []
        var events: [ChangeEvent] = []
    }

    /// Replaces ids by their order of appearance and times by zero, so two runs compare.
    struct Normaliser {
        var ids: [String: String] = [:]
        mutating func id(_ text: String?) -> String? {
            guard let text else { return nil }
            if let known = ids[text] { return known }
            let label = "id\(ids.count)"
            ids[text] = label
            return label
        }
        mutating func draft(_ draft: Draft) -> Draft {
            var draft = draft
            let label = id(draft.id.uuidString)!
            draft.id = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", Int(label.dropFirst(2))!))!
            draft.createdAt = Date(timeIntervalSince1970: 0)
            draft.updatedAt = Date(timeIntervalSince1970: 0)
            draft.attachments = draft.attachments.map { attachment in
                var attachment = attachment
                _ = id(attachment.id.uuidString)
                attachment.id = draft.id
                attachment.draft = draft.id
                return attachment
            }
            return draft
        }
        mutating func event(_ event: ChangeEvent) -> ChangeEvent {
            var event = event
            event.draft = id(event.draft)
            event.attachment = id(event.attachment)
            return event
        }
    }

    static func run(_ service: any PrefsService) async throws -> Transcript {
        var transcript = Transcript()
        var normaliser = Normaliser()
        func record(_ body: () async throws -> Draft) async {
            do { transcript.drafts.append(normaliser.draft(try await body())) } catch let error as PrefsError {
                transcript.errors.append(error.code)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        let first = try await service.createDraft(DraftInput(account: "alice", text: "first", thread: "t", language: "en"))
        transcript.drafts.append(normaliser.draft(first))
        await record { try await service.createDraft(DraftInput(account: "alice", text: "zero", thread: "t", position: 0)) }
        await record { try await service.createDraft(DraftInput(account: "bob", thread: "t")) }
        await record { try await service.createDraft(DraftInput(account: "alice", visibility: .direct, poll: Draft.Poll(options: ["a"], expiresIn: 60))) }
        var patch = DraftPatch()
        patch.text = .set(String(repeating: "x", count: 30))
        await record { try await service.updateDraft(first.id, patch, ifRevision: 2) }  // moved by the insert: revision 2
        await record { try await service.updateDraft(first.id, patch, ifRevision: 1) }  // stale
        await record { try await service.updateDraft(UUID(), patch, ifRevision: nil) }  // unknown
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let stream = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(bytes.prefix(100_000))
            continuation.yield(bytes.dropFirst(100_000))
            continuation.finish()
        }
        let added = try await service.addAttachment(to: first.id, AttachmentUpload(filename: "dir/pic.png", altText: nil), ifRevision: nil, bytes: stream)
        transcript.drafts.append(normaliser.draft(added.draft))
        try await service.set(ComposeRules.maxCharactersKey, to: 10, scope: "/accounts/alice/threads/t")
        try await service.set(ComposeRules.requireAltTextKey, to: true, scope: "/accounts/alice")
        transcript.validations.append(try await service.validation(of: first.id))
        var download = Data()
        for try await chunk in try await service.attachmentData(added.attachment.id, of: first.id).bytes { download.append(chunk) }
        transcript.bytes.append(download)
        await record { try await service.removeAttachment(added.attachment.id, of: first.id, ifRevision: nil) }
        transcript.drafts += try await service.thread("t").map { normaliser.draft($0) }
        try await service.deleteDraft(first.id, ifRevision: nil)
        let last = try await service.status().revision
        for try await event in service.watch(WatchRequest(since: 0, account: "alice")) where !event.kind.isNotice {
            transcript.events.append(normaliser.event(event))
            if event.revision >= last { break }
        }
        return transcript
    }

    @Test func embeddedStoreAndDaemonClientAgreeOnDrafts() async throws {
        try await withStore(EmbeddedStore.temporary()) { store in
            let daemon = try await Daemon()
            let embedded = try await Self.run(store)
            let remote = try await Self.run(daemon.client)
            #expect(embedded.errors == [.invalidRequest, .staleRevision, .notFound])
            #expect(embedded.errors == remote.errors)
            #expect(embedded.drafts == remote.drafts)
            #expect(embedded.validations == remote.validations)
            #expect(embedded.validations.first.map { Set($0.problems.map(\.code)) } == ["too_long", "missing_alt_text"])
            #expect(embedded.bytes == remote.bytes)
            #expect(embedded.events == remote.events)
            #expect(embedded.events.map(\.kind.rawValue).filter { $0 == "validation" }.count == 2)
        }
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func embeddedStoreAndPostgresStoreAgreeOnDrafts() async throws {
        try await withPostgresDatabase { database in
            try await withStore(EmbeddedStore.temporary()) { store in
                try await withStore(PostgresStore(url: database.url)) { postgres in
                    let embedded = try await Self.run(store)
                    let shared = try await Self.run(postgres)
                    Self.expectAlike(embedded, shared)
                }
            }
        }
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func embeddedStoreAndADaemonOnPostgresAgreeOnDrafts() async throws {
        try await Daemon.onPostgres { daemon in
            try await withStore(EmbeddedStore.temporary()) { store in
                Self.expectAlike(try await Self.run(store), try await Self.run(daemon.client))
            }
        }
    }

    /// Expects two transcripts of ``run(_:)`` to agree in every part.
    static func expectAlike(_ one: Transcript, _ other: Transcript, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(one.errors == other.errors, sourceLocation: sourceLocation)
        #expect(one.drafts == other.drafts, sourceLocation: sourceLocation)
        #expect(one.validations == other.validations, sourceLocation: sourceLocation)
        #expect(one.bytes == other.bytes, sourceLocation: sourceLocation)
        #expect(one.events == other.events, sourceLocation: sourceLocation)
    }
}
