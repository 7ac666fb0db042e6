import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// An upload the client abandons midway, or one a crash cuts off, leaves nothing: no
/// attachment, no bytes, no staging file.
@Suite struct UploadAbortTests {
    /// A 10 MB upload of which only 300 kB are sent, on a connection of its own: once it returns,
    /// the daemon is staging it.
    final class HalfSentUpload {
        private var socket: RawSocket?
        let staging: String

        init(to draft: Draft, on daemon: Daemon) async throws {
            staging = daemon.databasePath + ".uploads"
            let socket = try RawSocket(path: daemon.socketPath)
            self.socket = socket
            socket.send(
                "POST /v1/drafts/\(draft.id.uuidString)/attachments?filename=big.bin HTTP/1.1\r\nHost: prefsd\r\n"
                    + "Content-Length: 10000000\r\n\r\n" + String(repeating: "a", count: 300_000))
            try await waitUntil("the upload is staged") { !staged.isEmpty }
        }

        /// The files in the staging folder.
        var staged: [String] { (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] }

        /// Closes the connection, the upload unfinished.
        func hangUp() { socket = nil }
    }

    @Test func aClientThatHangsUpMidUploadLeavesNothingBehind() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "x"))
        let upload = try await HalfSentUpload(to: draft, on: daemon)
        #expect(upload.staged.count == 1)
        upload.hangUp()  // 9.7 MB short
        try await waitUntil("the staged upload is removed") { upload.staged.isEmpty }
        var patch = DraftPatch()
        patch.text = .set("after")
        _ = try await client.updateDraft(draft.id, patch, ifRevision: nil)
        let after = try await client.draft(draft.id)
        #expect(after.attachments.isEmpty)
        #expect(after.revision == 2)
        #expect(upload.staged.isEmpty)
        let blobs = try await CommandResult.runTool("/usr/bin/sqlite3", [daemon.databasePath, "SELECT count(*) FROM blob"])
        #expect(blobs.output == "0")
    }

    @Test func anUploadCutOffByACrashIsClearedAtTheNextStart() async throws {
        let daemon = try await Daemon()
        let draft = try await daemon.client.createDraft(DraftInput(account: "alice", text: "x"))
        let upload = try await HalfSentUpload(to: draft, on: daemon)
        #expect(upload.staged.count == 1)
        await daemon.kill()
        #expect(upload.staged.count == 1)  // the crash left it
        try await daemon.start()
        #expect(upload.staged.isEmpty)
        #expect(try await daemon.client.draft(draft.id).attachments.isEmpty)
    }
}
