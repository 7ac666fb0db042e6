import Foundation
import PrefsClient
import PrefsKit
import SampleImages
import TestHarness
import Testing

/// Uploads through the real daemon are sniffed: image sizes stored and shown, bytes that are not
/// the image type claimed refused with nothing kept.
@Suite struct AttachmentMediaTests {
    @Test func attachStoresTheImageTypeAndSizeItsBytesShow() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let file = daemon.folder.appending(path: "scan").path
        let bytes = SampleImage.jpeg(width: 1920, height: 1080, metadataBytes: 70_000) + Data(count: 300_000)
        #expect(FileManager.default.createFile(atPath: file, contents: bytes))

        let result = try DraftsCLITests.decode(AttachmentResult.self, try await daemon.prefsctl("--json", "drafts", "attach", id, file))
        #expect(result.attachment.mimeType == "image/jpeg")
        #expect(result.attachment.kind == .image)
        #expect(result.attachment.width == 1920 && result.attachment.height == 1080)
        let page = try await daemon.prefsctl("drafts", "show", id)
        #expect(page.stdout.contains("image/jpeg"))
        #expect(page.stdout.contains("1920×1080"), "\(page.stdout)")
    }

    @Test func bytesThatAreNotTheImageClaimedAre400AndKeepNothing() async throws {
        let daemon = try await Daemon()
        let draft = try await daemon.client.createDraft(DraftInput(account: "alice"))
        let cases: [(AttachmentUpload, Data, String)] = [
            (AttachmentUpload(filename: "a.png", mimeType: "image/png"), Data("not a png at all".utf8), "its bytes are no image format"),
            (AttachmentUpload(filename: "a.png", mimeType: "image/png"), SampleImage.gif(width: 1, height: 1), "its bytes are a GIF image"),
            (AttachmentUpload(filename: "a.png", kind: .video, mimeType: "image/png"), SampleImage.png(width: 1, height: 1), "kind=video"),
            (AttachmentUpload(filename: "a.png", kind: .gif), SampleImage.png(width: 1, height: 1), "kind=gif"),
        ]
        for (upload, body, message) in cases {
            let bytes = AsyncThrowingStream<Data, any Error> { $0.yield(body); $0.finish() }
            await #expect(throws: PrefsError.self, "\(upload)") {
                do {
                    _ = try await daemon.client.addAttachment(to: draft.id, upload, ifRevision: nil, bytes: bytes)
                } catch let error as PrefsError {
                    #expect(error.code == .invalidRequest, "\(error)")
                    #expect(error.message.contains(message), "\(error.message)")
                    throw error
                }
            }
        }

        let file = daemon.folder.appending(path: "notes.txt").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("hello".utf8)))
        let cli = try await daemon.prefsctl("drafts", "attach", draft.id.uuidString, file, "--kind", "image")
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("kind=image"), "\(cli.stderr)")

        #expect(try await daemon.client.draft(draft.id) == draft)
        let blobs = try await CommandResult.runTool("/usr/bin/sqlite3", [daemon.databasePath, "SELECT count(*) FROM blob"])
        #expect(blobs.output == "0")
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: daemon.databasePath + ".uploads")) ?? []
        #expect(staged.isEmpty)
    }
}
