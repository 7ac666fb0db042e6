import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// `prefsctl drafts` against a real `prefsd`: every field through `--json`, stale revisions,
/// attachments streamed in and out, exit statuses, watches; and the HTTP routes' refusals.
@Suite struct DraftsCLITests {
    /// Reads what `prefsctl --json` prints (dates as ISO 8601), expecting it to have succeeded.
    static func decode<T: Decodable>(_ type: T.Type, _ result: CommandResult) throws -> T {
        #expect(result.status == 0, "\(result.stderr)")
        return try WireJSON.decoder().decode(type, from: Data(result.stdout.utf8))
    }

    /// `count` pieces of `size` zero bytes.
    static func pieces(_ count: Int, of size: Int) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            for _ in 0..<count { continuation.yield(Data(count: size)) }
            continuation.finish()
        }
    }

    /// The lowercase hex SHA-256 of a file, by `sha256sum`.
    static func sha256(_ path: String) async throws -> String {
        let result = try await CommandResult.runTool("/usr/bin/sha256sum", [path])
        #expect(result.status == 0, "\(result.stderr)")
        return String(result.stdout.prefix { $0 != " " })
    }

    @Test func createShowListEditDeleteRoundTripEveryField() async throws {
        let daemon = try await Daemon()
        let created = try Self.decode(
            Draft.self,
            try await daemon.prefsctl(
                "--json", "drafts", "create", "--account", "alice", "--text", "Hello\nworld", "--thread", "t1",
                "--position", "0", "--reply-to", "109", "--cw", "spoilers", "--visibility", "unlisted", "--language",
                "pt-BR", "--sensitive"))
        #expect(created.account == "alice")
        #expect(created.text == "Hello\nworld")
        #expect(created.thread == "t1")
        #expect(created.position == 0)
        #expect(created.replyTo == "109")
        #expect(created.contentWarning == "spoilers")
        #expect(created.visibility == .unlisted)
        #expect(created.language == "pt-BR")
        #expect(created.sensitive)
        #expect(created.poll == nil)
        #expect(created.revision == 1)
        #expect(created.attachments.isEmpty)
        #expect(abs(created.createdAt.timeIntervalSinceNow) < 60)
        #expect(created.updatedAt == created.createdAt)

        // The full id, or the eight characters the tables show.
        let shortID = String(created.id.uuidString.prefix(8))
        #expect(try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", created.id.uuidString)) == created)
        #expect(try Self.decode(Draft.self, try await daemon.prefsctl("drafts", "show", shortID.lowercased(), "--json")) == created)
        struct Listing: Decodable { var drafts: [Draft] }
        #expect(try Self.decode(Listing.self, try await daemon.prefsctl("--json", "drafts", "list", "--account", "alice")).drafts == [created])
        #expect(try Self.decode(Listing.self, try await daemon.prefsctl("--json", "drafts", "list", "--account", "bob")).drafts == [])

        // Without the plain `create`'s defaults: the id alone, and readable tables.
        let plain = try await daemon.prefsctl("drafts", "create", "--account", "bob")
        #expect(plain.status == 0)
        #expect(UUID(uuidString: plain.output) != nil)
        let table = try await daemon.prefsctl("drafts", "list", "--account", "alice")
        #expect(table.stdout.hasPrefix("ID        ACCOUNT  THREAD/POS  UPDATED"))
        #expect(table.stdout.contains("\(shortID)  alice    t1/0"))
        #expect(table.stdout.contains("Hello  "))
        let page = try await daemon.prefsctl("drafts", "show", shortID)
        #expect(page.stdout.contains("content warning  spoilers"))
        #expect(page.stdout.contains("    Hello\n    world\n"))

        let edited = try Self.decode(
            Draft.self,
            try await daemon.prefsctl(
                "--json", "drafts", "edit", shortID, "--text", "Edited", "--cw", "", "--visibility", "direct",
                "--language", "", "--no-sensitive", "--reply-to", "", "--thread", "t2", "--position", "0",
                "--if-revision", "1"))
        #expect(edited.id == created.id)
        #expect(edited.text == "Edited")
        #expect(edited.contentWarning == nil)
        #expect(edited.visibility == .direct)
        #expect(edited.language == nil)
        #expect(!edited.sensitive)
        #expect(edited.replyTo == nil)
        #expect(edited.thread == "t2")
        #expect(edited.position == 0)
        #expect(edited.revision == 2)
        #expect(edited.createdAt == created.createdAt)
        #expect(try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", shortID)) == edited)

        let validation = try Self.decode(DraftValidation.self, try await daemon.prefsctl("--json", "drafts", "validate", shortID))
        #expect(validation.valid)
        #expect(try await daemon.prefsctl("drafts", "validate", shortID).output == "valid")

        let deleted = try Self.decode(WriteResult.self, try await daemon.prefsctl("--json", "drafts", "delete", shortID, "--if-revision", "2"))
        #expect(deleted.revision > 0)
        #expect(try await daemon.prefsctl("drafts", "show", created.id.uuidString).status == 3)
    }

    @Test func aStaleRevisionExits4AndChangesNothing() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice", "--text", "one").output
        #expect(try await daemon.prefsctl("drafts", "edit", id, "--text", "two").status == 0)
        let before = try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", id))
        #expect(before.revision == 2)

        let stale = try await daemon.prefsctl("drafts", "edit", id, "--text", "three", "--if-revision", "1")
        #expect(stale.status == 4)
        #expect(stale.stderr.contains("revision 2"))
        #expect(try await daemon.prefsctl("drafts", "delete", id, "--if-revision", "1").status == 4)
        #expect(try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", id)) == before)

        // Over HTTP: 412 with the draft as it is now; If-Match quoted or not.
        let transport = UnixSocketTransport(socketPath: daemon.socketPath)
        for header in ["1", "\"1\""] {
            let answer = try await transport.send(
                HTTPRequestSpec(method: "PATCH", target: "/v1/drafts/\(id)", body: Data(#"{"text": "x"}"#.utf8), headers: [("If-Match", header)]))
            #expect(answer.status == 412)
            #expect(try WireJSON.decoder().decode(ErrorBody.self, from: answer.body).current == before)
        }
        let current = try await transport.send(
            HTTPRequestSpec(method: "PATCH", target: "/v1/drafts/\(id)", body: Data(#"{"text": "x"}"#.utf8), headers: [("If-Match", "\"2\"")]))
        #expect(current.status == 200)
    }

    @Test func attachAndFetchAFiveMebibyteFileByteForByte() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let original = daemon.folder.appending(path: "photo.jpg").path
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 5 * 1024 * 1024)
        #expect(FileManager.default.createFile(atPath: original, contents: random))

        let attached = try await daemon.prefsctl("drafts", "attach", id, original, "--alt", "A cat")
        #expect(attached.status == 0, "\(attached.stderr)")
        #expect(attached.stderr.isEmpty, "no progress line when stderr is not a terminal")
        let attachmentID = try #require(UUID(uuidString: attached.output))

        let copy = daemon.folder.appending(path: "copy.jpg").path
        let fetched = try await daemon.prefsctl("drafts", "fetch", id, String(attachmentID.uuidString.prefix(8)), "-o", copy)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try await Self.sha256(copy) == Self.sha256(original))
        #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))

        let draft = try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", id))
        let attachment = try #require(draft.attachments.first)
        #expect(attachment.id == attachmentID)
        #expect(attachment.filename == "photo.jpg")
        #expect(attachment.mimeType == "image/jpeg")
        #expect(attachment.kind == .image)
        #expect(attachment.byteSize == 5 * 1024 * 1024)
        #expect(try await attachment.sha256 == Self.sha256(original))
        #expect(attachment.altText == "A cat")
        #expect(draft.revision == 2)

        #expect(try await daemon.prefsctl("drafts", "detach", id, attachmentID.uuidString).status == 0)
        #expect(try Self.decode(Draft.self, try await daemon.prefsctl("--json", "drafts", "show", id)).attachments.isEmpty)
    }

    @Test func unknownDraftsAndAttachmentsExit3() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice").output
        let nobody = UUID().uuidString
        let file = daemon.folder.appending(path: "a.txt").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("a".utf8)))
        for arguments in [
            ["show", nobody], ["show", "ffffffff"], ["edit", nobody, "--text", "x"], ["delete", nobody],
            ["validate", nobody], ["attach", nobody, file], ["detach", id, nobody], ["fetch", id, nobody, "-o", file + ".copy"],
        ] {
            let result = try await CommandResult.run("prefsctl", ["--socket", daemon.socketPath, "drafts"] + arguments)
            #expect(result.status == 3, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("prefsctl: "), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: file + ".copy"))
        #expect(!FileManager.default.fileExists(atPath: file + ".copy.partial"))
    }

    @Test func badDraftRequestsAre400() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.client.createDraft(DraftInput(account: "alice")).id.uuidString
        let cases: [(String, String, String?, String)] = [
            ("PATCH", "/v1/drafts/\(id)", #"{"txt": "x"}"#, "invalid_request"),
            ("PATCH", "/v1/drafts/\(id)", #"{"visibility": "everyone"}"#, "invalid_request"),
            ("PATCH", "/v1/drafts/\(id)", "{", "invalid_json"),
            ("POST", "/v1/drafts", #"{"text": "no account"}"#, "invalid_request"),
            ("GET", "/v1/drafts/not-a-uuid", nil, "invalid_request"),
            ("GET", "/v1/watch?draft=not-a-uuid", nil, "invalid_request"),
            ("POST", "/v1/drafts/\(id)/attachments", "bytes", "invalid_request"),
            ("POST", "/v1/drafts/\(id)/attachments?filename=a.png&kind=sticker", "bytes", "invalid_request"),
        ]
        for (method, target, body, code) in cases {
            let answer = try await daemon.raw(method, target, body: body)
            #expect(answer.status == 400, "\(method) \(target): \(answer.body)")
            #expect(answer.code == code, "\(method) \(target): \(answer.body)")
        }
        let badIfMatch = try await UnixSocketTransport(socketPath: daemon.socketPath).send(
            HTTPRequestSpec(method: "DELETE", target: "/v1/drafts/\(id)", headers: [("If-Match", "soon")]))
        #expect(badIfMatch.status == 400)
        #expect(try await daemon.client.draft(UUID(uuidString: id)!).revision == 1)
    }

    @Test func uploadedFileNamesLoseTheirPath() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let draft = try await client.createDraft(DraftInput(account: "alice"))
        let result = try await client.addAttachment(
            to: draft.id, AttachmentUpload(filename: "../../etc/passwd"), ifRevision: nil, bytes: Self.pieces(1, of: 100))
        #expect(result.attachment.filename == "passwd")

        let download = try await daemon.raw("GET", "/v1/drafts/\(draft.id)/attachments/\(result.attachment.id)/data")
        #expect(download.status == 200)
        #expect(download.body.utf8.count == 100)
    }

    /// Over the limit, every way of uploading gets `too_large` at once — the rest of the body
    /// is not waited for — and nothing is kept.
    @Test(.timeLimit(.minutes(5))) func anUploadOverTheLimitIsRefusedWhicheverWayItIsSent() async throws {
        let daemon = try await Daemon(arguments: ["--max-attachment-bytes", "1000000"])
        let draft = try await daemon.client.createDraft(DraftInput(account: "alice"))
        let file = daemon.folder.appending(path: "big.bin").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data(count: 8 * 1024 * 1024)))
        let cli = try await daemon.prefsctl("drafts", "attach", draft.id.uuidString, file)
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("limit"))

        let socket = PrefsClient(transport: UnixSocketTransport(socketPath: daemon.socketPath))
        let uploads: [(String, PrefsClient, Int64?)] = [
            ("kept-alive connection, length known", daemon.client, 8 * 1024 * 1024),
            ("kept-alive connection, chunked", daemon.client, nil),
            ("new connection, chunked", socket, nil),
        ]
        for (way, client, length) in uploads {
            await #expect(throws: PrefsError.self, "\(way)") {
                do {
                    _ = try await client.addAttachment(
                        to: draft.id, AttachmentUpload(filename: "big.bin"), ifRevision: nil,
                        bytes: Self.pieces(32, of: 256 * 1024), length: length)
                } catch let error as PrefsError {
                    #expect(error.code == .tooLarge, "\(way): \(error)")
                    throw error
                }
            }
        }
        #expect(try await daemon.client.draft(draft.id) == draft)
    }

    @Test func draftsWatchPrintsTheDraftsEvents() async throws {
        let daemon = try await Daemon()
        let id = try await daemon.prefsctl("drafts", "create", "--account", "alice", "--thread", "t1").output
        #expect(try await daemon.prefsctl("drafts", "edit", id, "--text", "hi").status == 0)
        let file = daemon.folder.appending(path: "a.txt").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("a".utf8)))
        let attachmentID = try await daemon.prefsctl("drafts", "attach", id, file).output
        #expect(try await daemon.prefsctl("drafts", "detach", id, attachmentID).status == 0)
        _ = try await daemon.prefsctl("drafts", "create", "--account", "bob")

        let lines = try await daemon.prefsctl("drafts", "watch", id, "--since", "0", "--count", "4").stdout.split(separator: "\n")
        #expect(lines.map { $0.split(separator: " ")[1] } == ["draft.created", "draft.updated", "attachment.added", "attachment.removed"])
        #expect(lines.allSatisfy { $0.contains("draft \(id)") && $0.contains("thread t1") })
        #expect(lines[2].contains("attachment \(attachmentID)"))

        let json = try await daemon.prefsctl("--json", "drafts", "watch", "--account", "alice", "--since", "0", "--count", "4")
        let events = try json.stdout.split(separator: "\n").map { try JSONDecoder().decode(ChangeEvent.self, from: Data($0.utf8)) }
        #expect(events.filter { !$0.kind.isNotice }.map(\.draftRevision) == [1, 2, 3, 4])

        let thread = try await daemon.prefsctl("drafts", "watch", "--thread", "t1", "--since", "0", "--count", "1")
        #expect(thread.stdout.contains("draft.created"))
        #expect(try await daemon.prefsctl("drafts", "watch", id, "--thread", "t1").status == 2)
    }
}
