import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// `prefsctl drafts` changes beyond the text: polls on `create` and `edit`, `edit-attachment`,
/// and `--if-revision` on every attachment change.
@Suite struct DraftsCLIChangeTests {
    @Test func pollsAreCreatedChangedAndRemoved() async throws {
        let daemon = try await Daemon()
        let created = try DraftsCLITests.decode(
            Draft.self,
            try await daemon.prefsctl(
                "--json", "drafts", "create", "--account", "alice", "--text", "Lunch?", "--poll-option", "Pizza",
                "--poll-option", "Soup", "--poll-expires", "3600"))
        #expect(created.poll == Draft.Poll(options: ["Pizza", "Soup"], expiresIn: 3600, multiple: false))
        let id = created.id.uuidString
        let plain = try DraftsCLITests.decode(
            Draft.self, try await daemon.prefsctl("--json", "drafts", "create", "--account", "alice", "--poll-option", "A", "--poll-multiple"))
        #expect(plain.poll == Draft.Poll(options: ["A"], expiresIn: 86_400, multiple: true))  // a day by default

        // Only some poll options: the rest of the poll stays as it is.
        let multiple = try DraftsCLITests.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "edit", id, "--poll-multiple"))
        #expect(multiple.poll == Draft.Poll(options: ["Pizza", "Soup"], expiresIn: 3600, multiple: true))
        let replaced = try DraftsCLITests.decode(
            Draft.self,
            try await daemon.prefsctl("--json", "drafts", "edit", id, "--poll-option", "Tacos", "--poll-option", "Salad", "--if-revision", "2"))
        #expect(replaced.poll == Draft.Poll(options: ["Tacos", "Salad"], expiresIn: 3600, multiple: true))
        #expect(replaced.revision == 3)
        let stale = try await daemon.prefsctl("drafts", "edit", id, "--poll-expires", "60", "--if-revision", "2")
        #expect(stale.status == 4, "\(stale.stderr)")

        let removed = try DraftsCLITests.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "edit", id, "--no-poll"))
        #expect(removed.poll == nil)
        let noPoll = try await daemon.prefsctl("drafts", "edit", id, "--poll-expires", "60")
        #expect(noPoll.status == 1)
        #expect(noPoll.stderr.contains("--poll-option"), "\(noPoll.stderr)")

        // Usage errors: exit 2, nothing sent.
        #expect(try await daemon.prefsctl("drafts", "create", "--account", "alice", "--poll-expires", "60").status == 2)
        #expect(try await daemon.prefsctl("drafts", "edit", id, "--no-poll", "--poll-option", "x").status == 2)
        #expect(try await daemon.prefsctl("drafts", "edit", id).status == 2)
        // A poll the daemon refuses: exit 1, nothing changed.
        #expect(try await daemon.prefsctl("drafts", "edit", id, "--poll-option", "x", "--poll-expires", "0").status == 1)
        #expect(try await daemon.client.draft(created.id) == removed)
    }

    @Test func editAttachmentChangesAltTextAndPosition() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let file = daemon.folder.appending(path: "a.txt").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("a".utf8)))
        let first = try await daemon.prefsctl("drafts", "attach", id, file, "--alt", "first").output
        let second = try await daemon.prefsctl("drafts", "attach", id, file).output

        let moved = try DraftsCLITests.decode(
            AttachmentResult.self,
            try await daemon.prefsctl(
                "--json", "drafts", "edit-attachment", id, String(second.prefix(8)), "--alt", "second", "--position", "0",
                "--if-revision", "3"))
        #expect(moved.attachment.altText == "second")
        #expect(moved.draft.attachments.map(\.id.uuidString) == [second, first])
        #expect(moved.draft.revision == 4)

        #expect(try await daemon.prefsctl("drafts", "edit-attachment", id, first, "--alt", "").status == 0)
        let draft = try await daemon.client.draft(try #require(UUID(uuidString: id)))
        #expect(draft.attachments.map(\.altText) == ["second", nil])
        #expect(try await daemon.prefsctl("drafts", "edit-attachment", id, first).status == 2)
        #expect(try await daemon.prefsctl("drafts", "edit-attachment", id, first, "--position", "5").status == 1)
        #expect(try await daemon.prefsctl("drafts", "edit-attachment", id, UUID().uuidString, "--alt", "x").status == 3)
        #expect(try await daemon.client.draft(draft.id) == draft)
    }

    @Test func attachmentChangesOnAStaleRevisionExit4AndChangeNothing() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let file = daemon.folder.appending(path: "a.txt").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("a".utf8)))
        let attached = try await daemon.prefsctl("drafts", "attach", id, file, "--if-revision", "1")
        #expect(attached.status == 0, "\(attached.stderr)")
        let before = try await daemon.client.draft(try #require(UUID(uuidString: id)))
        #expect(before.revision == 2)

        for arguments in [
            ["attach", id, file, "--if-revision", "1"], ["detach", id, attached.output, "--if-revision", "1"],
            ["edit-attachment", id, attached.output, "--alt", "x", "--if-revision", "1"],
        ] {
            let stale = try await CommandResult.run("prefsctl", ["--socket", daemon.socketPath, "drafts"] + arguments)
            #expect(stale.status == 4, "\(arguments): \(stale.stderr)")
            #expect(stale.stderr.contains("revision 2"), "\(arguments): \(stale.stderr)")
        }
        #expect(try await daemon.client.draft(before.id) == before)
        #expect(try await daemon.prefsctl("drafts", "detach", id, attached.output, "--if-revision", "2").status == 0)
    }
}

