import Foundation
import PrefsClient
import PrefsKit
import Testing

/// An upload the client abandons midway leaves nothing: no attachment, no bytes, no staging file.
@Suite struct UploadAbortTests {
    @Test func aClientThatHangsUpMidUploadLeavesNothingBehind() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "x"))
        let staging = daemon.databasePath + ".uploads"
        func staged() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] }
        do {
            let socket = try RawSocket(path: daemon.socketPath)
            socket.send(
                "POST /v1/drafts/\(draft.id.uuidString)/attachments?filename=big.bin HTTP/1.1\r\nHost: prefsd\r\n"
                    + "Content-Length: 10000000\r\n\r\n" + String(repeating: "a", count: 300_000))
            // Hang up only once the daemon is staging the upload.
            for _ in 0..<400 where staged().isEmpty { try await Task.sleep(for: .milliseconds(25)) }
            #expect(staged().count == 1)
        }  // the socket closes here, 9.7 MB short
        for _ in 0..<400 where !staged().isEmpty { try await Task.sleep(for: .milliseconds(25)) }
        var patch = DraftPatch()
        patch.text = .set("after")
        _ = try await client.updateDraft(draft.id, patch, ifRevision: nil)
        let after = try await client.draft(draft.id)
        #expect(after.attachments.isEmpty)
        #expect(after.revision == 2)
        #expect(staged().isEmpty)
        let blobs = try CommandResult.runTool("/usr/bin/sqlite3", [daemon.databasePath, "SELECT count(*) FROM blob"])
        #expect(blobs.output == "0")
    }

    @Test func anUploadCutOffByACrashIsClearedAtTheNextStart() async throws {
        let daemon = try await Daemon()
        let draft = try await daemon.client.createDraft(DraftInput(account: "alice", text: "x"))
        let staging = daemon.databasePath + ".uploads"
        func staged() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] }
        let socket = try RawSocket(path: daemon.socketPath)
        socket.send(
            "POST /v1/drafts/\(draft.id.uuidString)/attachments?filename=big.bin HTTP/1.1\r\nHost: prefsd\r\n"
                + "Content-Length: 10000000\r\n\r\n" + String(repeating: "a", count: 300_000))
        for _ in 0..<400 where staged().isEmpty { try await Task.sleep(for: .milliseconds(25)) }
        #expect(staged().count == 1)
        daemon.kill()
        #expect(staged().count == 1)  // the crash left it
        try await daemon.start()
        #expect(staged().isEmpty)
        #expect(try await daemon.client.draft(draft.id).attachments.isEmpty)
        withExtendedLifetime(socket) {}
    }
}
