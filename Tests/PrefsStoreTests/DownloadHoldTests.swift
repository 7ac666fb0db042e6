import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// A download that has begun delivers the bytes it began with, whole, whatever happens to its
/// attachment meanwhile; the bytes no attachment uses are freed after it.
@Suite("Downloads hold their bytes", .timeLimit(.minutes(5)))
struct DownloadHoldTests {
    /// Bytes of many chunks (the store keeps 256 KiB a chunk).
    static let bytes = sampleBytes(2_000_000, seed: 9)

    /// A draft with one attachment of `bytes`.
    static func attached(_ store: EmbeddedStore, _ bytes: Data = bytes) async throws -> (draft: Draft, attachment: PrefsKit.Attachment) {
        let draft = try await store.createDraft(DraftInput(account: "alice", text: "x"))
        let added = try await store.addAttachment(
            to: draft.id, AttachmentUpload(filename: "big.bin", kind: .file), ifRevision: nil, bytes: uploadStream(bytes))
        return (draft, added.attachment)
    }

    static func blobCount(_ store: EmbeddedStore) async throws -> String {
        try await sqlite3(store.path, "SELECT count(*) FROM blob")
    }

    @Test("Deleting the draft or removing the attachment midway: every byte comes, and the bytes go after",
          arguments: ["delete the draft", "remove the attachment"])
    func removalMidway(removal: String) async throws {
        try await withStore(makeStore()) { store in
            let (draft, attachment) = try await Self.attached(store)
            let download = try await store.attachmentData(attachment.id, of: draft.id)
            var chunks = download.bytes.makeAsyncIterator()
            var received = try #require(try await chunks.next())
            if removal == "delete the draft" {
                try await store.deleteDraft(draft.id, ifRevision: nil)
            } else {
                _ = try await store.removeAttachment(attachment.id, of: draft.id, ifRevision: nil)
            }
            #expect(try await Self.blobCount(store) == "1")
            while let chunk = try await chunks.next() { received.append(chunk) }
            #expect(received == Self.bytes)
            #expect(try await Self.blobCount(store) == "0")
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob_chunk") == "0")
        }
    }

    @Test("Bytes another attachment still uses stay after the download")
    func sharedBytesStay() async throws {
        try await withStore(makeStore()) { store in
            let (draft, attachment) = try await Self.attached(store)
            let (other, _) = try await Self.attached(store)
            let download = try await store.attachmentData(attachment.id, of: draft.id)
            try await store.deleteDraft(draft.id, ifRevision: nil)
            #expect(try await collectBytes(download) == Self.bytes)
            #expect(try await Self.blobCount(store) == "1")
            try await store.deleteDraft(other.id, ifRevision: nil)
            #expect(try await Self.blobCount(store) == "0")
        }
    }

    @Test("A download dropped unfinished lets its bytes go")
    func droppedDownload() async throws {
        try await withStore(makeStore()) { store in
            let (draft, attachment) = try await Self.attached(store)
            var download: AttachmentDownload? = try await store.attachmentData(attachment.id, of: draft.id)
            var chunks = download?.bytes.makeAsyncIterator()
            #expect(try await chunks?.next()?.isEmpty == false)
            try await store.deleteDraft(draft.id, ifRevision: nil)
            #expect(try await Self.blobCount(store) == "1")
            download = nil
            chunks = nil
            try await waitUntil("the bytes are freed") { try await Self.blobCount(store) == "0" }
        }
    }

    @Test("Bytes a download held when the store closed are freed when it opens again")
    func heldAtClose() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "prefs.sqlite").path
        let store = try EmbeddedStore(path: path, configuration: .forTests())
        let (draft, attachment) = try await Self.attached(store)
        let download = try await store.attachmentData(attachment.id, of: draft.id)
        try await store.deleteDraft(draft.id, ifRevision: nil)
        await store.close()
        #expect(try await sqlite3(path, "SELECT count(*) FROM blob") == "1")
        try await withStore(try EmbeddedStore(path: path, configuration: .forTests())) { reopened throws in
            #expect(try await Self.blobCount(reopened) == "0")
        }
        _ = download
    }

    @Test("A download of an attachment removed before it began is not_found")
    func removedBefore() async throws {
        try await withStore(makeStore()) { store in
            let (draft, attachment) = try await Self.attached(store)
            _ = try await store.removeAttachment(attachment.id, of: draft.id, ifRevision: nil)
            let error = await #expect(throws: PrefsError.self) { try await store.attachmentData(attachment.id, of: draft.id) }
            #expect(error?.code == .notFound)
            #expect(try await Self.blobCount(store) == "0")
        }
    }
}
