import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import SampleImages
import TestHarness
import Testing

/// Uploads sniffed as they stream in: image sizes stored, bytes that contradict their type refused
/// with nothing kept.
@Suite("Attachment media in the store")
struct AttachmentMediaStoreTests {
    /// A stream that yields `data` and then never ends, as a client that is still sending.
    static func unfinished(_ data: Data) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in continuation.yield(data) }
    }

    /// The files waiting in the store's staging folder.
    static func staged(_ store: EmbeddedStore) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: store.path + ".uploads")) ?? []
    }

    @Test("Image sizes are read from the bytes, across chunks, and stored")
    func sizesStored() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            let png = SampleImage.png(width: 1200, height: 800) + sampleBytes(300_000)
            let added = try await store.addAttachment(
                to: draft.id, AttachmentUpload(filename: "scan.bin"), ifRevision: 1, bytes: uploadStream(png, chunk: 3))
            #expect(added.attachment.mimeType == "image/png")
            #expect(added.attachment.kind == .image)
            #expect(added.attachment.width == 1200 && added.attachment.height == 800)

            let jpeg = SampleImage.jpeg(width: 4000, height: 3000, metadataBytes: 100_000) + sampleBytes(50_000)
            let photo = try await store.addAttachment(
                to: draft.id, AttachmentUpload(filename: "photo.jpg", mimeType: "image/jpeg"), ifRevision: 2,
                bytes: uploadStream(jpeg, chunk: 4096))
            #expect(photo.attachment.width == 4000 && photo.attachment.height == 3000)

            let stored = try await store.draft(draft.id).attachments
            #expect(stored.map(\.width) == [1200, 4000])
            #expect(stored.map(\.height) == [800, 3000])
            #expect(try await collectBytes(store.attachmentData(added.attachment.id, of: draft.id)) == png)
        }
    }

    @Test("Bytes that are not the image type claimed are refused before the rest is read; nothing is kept", .timeLimit(.minutes(5)))
    func mismatchRefused() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            let uploads: [(AttachmentUpload, Data)] = [
                (AttachmentUpload(filename: "a.png", mimeType: "image/png"), sampleBytes(ImageHeader.prefixLength + 10)),
                (AttachmentUpload(filename: "a.png", mimeType: "image/png"), SampleImage.gif(width: 1, height: 1)),
                (AttachmentUpload(filename: "a.png", kind: .video, mimeType: "image/png"), SampleImage.png(width: 1, height: 1)),
                (AttachmentUpload(filename: "a.jpg", kind: .image), sampleBytes(20)),
            ]
            for (upload, bytes) in uploads {
                // A short body ends; a long one would never end: the refusal must not wait for it.
                let stream = bytes.count > ImageHeader.prefixLength ? Self.unfinished(bytes) : uploadStream(bytes)
                await #expect(throws: PrefsError.self, "\(upload)") {
                    do {
                        _ = try await store.addAttachment(to: draft.id, upload, ifRevision: nil, bytes: stream)
                    } catch let error as PrefsError {
                        #expect(error.code == .invalidRequest, "\(error)")
                        throw error
                    }
                }
            }
            #expect(try await store.draft(draft.id) == draft)
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM blob") == "0")
            #expect(Self.staged(store).isEmpty)
        }
    }

    @Test("A stale revision is refused before any byte is read", .timeLimit(.minutes(5)))
    func staleBeforeBytes() async throws {
        try await withStore(makeStore()) { store in
            let draft = try await store.createDraft(DraftInput(account: "alice"))
            await #expect(throws: PrefsError.self) {
                do {
                    _ = try await store.addAttachment(
                        to: draft.id, AttachmentUpload(filename: "a.txt"), ifRevision: 7, bytes: Self.unfinished(Data("a".utf8)))
                } catch let error as PrefsError {
                    #expect(error.code == .staleRevision)
                    #expect(error.currentDraft == draft)
                    throw error
                }
            }
            #expect(Self.staged(store).isEmpty)
        }
    }
}
