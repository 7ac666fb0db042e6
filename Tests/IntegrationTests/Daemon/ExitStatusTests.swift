import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// README's table of exit statuses, verb by verb: 0 ok, 1 failed, 2 usage, 3 not found,
/// 4 conflict, 69 the daemon unreachable or gone. Every verb is run at least once to success and
/// once into each kind of failure it can meet.
@Suite struct ExitStatusTests {
    /// One command line and the status it must end with; `says`, if given, must be in its
    /// output (stdout or stderr).
    struct Case: CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var says: String?
        init(_ status: Int32, _ arguments: [String], says: String? = nil) {
            self.arguments = arguments
            self.status = status
            self.says = says
        }
        var description: String { "prefsctl " + arguments.joined(separator: " ") }
    }

    /// The files the cases use, in the daemon's folder.
    struct Files {
        var schema: String
        var badSchema: String
        var dump: String
        var dumpBelowLock: String
        var notADump: String
        var missing: String
        var attachment: String
        var copy: String

        init(in folder: URL) throws {
            func file(_ name: String, _ content: String) throws -> String {
                let url = folder.appending(path: name)
                try Data(content.utf8).write(to: url)
                return url.path
            }
            schema = try file("schema.json", #"{"timeline.fontSize": {"type": "int", "default": 14, "min": 8, "max": 72}}"#)
            badSchema = try file("bad-schema.json", #"{"ui.theme": {"type": "colour"}}"#)
            dump = try file(
                "dump.json", #"{"format": 1, "scope": "/loaded", "values": [{"key": "loaded.key", "scope": "/loaded", "value": 1}]}"#)
            dumpBelowLock = try file(
                "below-lock.json", #"{"format": 1, "values": [{"key": "locked.key", "scope": "/accounts/x", "value": 1}]}"#)
            notADump = try file("not-a-dump.json", #"{"timeline.fontSize": 16}"#)
            missing = folder.appending(path: "missing.json").path
            attachment = try file("notes.txt", "some notes\n")
            copy = folder.appending(path: "copy.txt").path
        }
    }

    @Test func everyVerbExitsByTheTable() async throws {
        let daemon = try await Daemon()
        let files = try Files(in: daemon.folder)
        let client = daemon.client
        try await client.set("a.b", to: 1)
        try await client.lock("locked.key", scope: "/accounts")
        let draft = try await client.createDraft(DraftInput(account: "alice", text: "hello"))
        let spare = try await client.createDraft(DraftInput(account: "alice", text: "to delete"))
        let invalid = try await client.createDraft(DraftInput(account: "bob", text: String(repeating: "x", count: 600)))
        let unknownDraft = UUID().uuidString
        let (id, spareID, invalidID) = (draft.id.uuidString, spare.id.uuidString, invalid.id.uuidString)

        var cases: [Case] = [
            Case(0, ["status"]),
            Case(2, ["status", "--bogus"]),
            // Sync, on a daemon with no upstream (a device's are SyncTests').
            Case(1, ["sync"], says: "has no upstream"),
            Case(1, ["sync", "--wait", "--timeout", "1"], says: "has no upstream"),
            Case(2, ["sync", "--timeout", "5"], says: "--timeout goes with --wait"),
            Case(0, ["conflicts"], says: "no conflicts"),
            Case(0, ["conflicts", "--json", "--since", "2h", "--key", "a.b", "--scope", "/accounts"]),
            Case(2, ["conflicts", "--limit", "0"]),
            Case(2, ["conflicts", "--key", "Bad"]),
            Case(2, ["gte", "a.b"], says: "Did you mean 'get'?"),
            Case(2, ["drafts", "lst"], says: "Did you mean 'list'?"),

            Case(0, ["get", "a.b"]),
            Case(3, ["get", "never.set"]),
            Case(2, ["get", "Bad"], says: "Usage: prefsctl get"),
            Case(2, ["get", "a.b", "--scope", "accounts"], says: "Usage: prefsctl get"),
            Case(2, ["get"], says: "Usage: prefsctl get"),

            Case(0, ["schema", "load", files.schema]),
            Case(1, ["schema", "load", files.badSchema]),
            Case(3, ["schema", "load", files.missing]),
            Case(2, ["schema", "load"], says: "Usage: prefsctl schema load"),
            Case(0, ["schema", "list"]),
            Case(0, ["schema", "show", "timeline.fontSize"]),
            Case(3, ["schema", "show", "no.schema"]),
            Case(2, ["schema", "show", "Bad"]),

            Case(0, ["set", "a.c", "1"]),
            Case(1, ["set", "timeline.fontSize", "100"], says: "at most 72"),
            Case(4, ["set", "locked.key", "1", "--scope", "/accounts/x"],
                 says: "To remove it: prefsctl unlock locked.key --scope /accounts"),
            Case(2, ["set", "Bad", "1"], says: "Usage: prefsctl set"),
            Case(2, ["set", "a.c", "1", "--scope", "/a/"]),
            Case(2, ["set", "a.c"]),

            Case(0, ["reset", "a.c"]),
            Case(0, ["reset", "a.c"], says: "nothing to reset"),
            Case(4, ["reset", "locked.key", "--scope", "/accounts/x"]),
            Case(2, ["reset", "Bad"]),

            Case(0, ["list", "--scope", "/accounts"]),
            Case(2, ["list", "--scope", "accounts"]),

            Case(0, ["lock", "x.y", "--scope", "/a"]),
            Case(2, ["lock", "x.y"]),
            Case(2, ["lock", "Bad", "--scope", "/a"]),
            Case(0, ["unlock", "x.y", "--scope", "/a"]),
            Case(0, ["unlock", "x.y", "--scope", "/a"], says: "nothing to unlock"),
            Case(2, ["unlock", "x.y", "--scope", "a"]),

            Case(0, ["watch", "a.b", "--since", "0", "--count", "1"]),
            Case(0, ["watch", "quiet.key", "--timeout", "0.2"]),
            Case(2, ["watch", "Bad"]),
            Case(2, ["watch", "--since", "-1"]),

            Case(0, ["dump", "--scope", "/accounts"]),
            Case(2, ["dump", "--scope", "accounts"]),
            Case(0, ["load", files.dump]),
            Case(0, ["load", "--replace", files.dump]),
            Case(1, ["load", files.notADump], says: "is not a prefsctl dump"),
            Case(4, ["load", files.dumpBelowLock]),
            Case(3, ["load", files.missing]),
            Case(2, ["load"]),

            Case(0, ["drafts", "list"]),
            Case(2, ["drafts", "list", "--bogus"]),
            Case(0, ["drafts", "create", "--account", "carol"]),
            Case(1, ["drafts", "create", "--account", "a/b"]),
            Case(2, ["drafts", "create"], says: "Usage: prefsctl drafts create"),
            Case(0, ["drafts", "show", id]),
            Case(3, ["drafts", "show", unknownDraft]),
            Case(2, ["drafts", "show"]),
            Case(0, ["drafts", "edit", id, "--text", "hello again", "--if-revision", "1"]),
            Case(4, ["drafts", "edit", id, "--text", "stale", "--if-revision", "1"]),
            Case(3, ["drafts", "edit", unknownDraft, "--text", "x"]),
            Case(2, ["drafts", "edit", id]),
            Case(0, ["drafts", "validate", id], says: "valid"),
            Case(1, ["drafts", "validate", invalidID], says: "the limit is 500"),
            Case(1, ["--json", "drafts", "validate", invalidID]),
            Case(3, ["drafts", "validate", unknownDraft]),
            Case(0, ["drafts", "attach", id, files.attachment]),
            Case(4, ["drafts", "attach", id, files.attachment, "--if-revision", "1"]),
            Case(3, ["drafts", "attach", id, files.missing]),
            Case(3, ["drafts", "attach", unknownDraft, files.attachment]),
            Case(2, ["drafts", "attach", id]),
            Case(4, ["drafts", "delete", spareID, "--if-revision", "2"]),
            Case(0, ["drafts", "delete", spareID]),
            Case(3, ["drafts", "delete", spareID]),
            Case(0, ["drafts", "watch", id, "--since", "0", "--count", "1"]),
            Case(2, ["drafts", "watch"]),
        ]
        for testCase in cases {
            try await check(testCase, on: daemon)
        }

        // Attachments: the one attached above.
        let attachment = try #require(try await client.draft(draft.id).attachments.first).id.uuidString
        cases = [
            Case(0, ["drafts", "edit-attachment", id, attachment, "--alt", "notes"]),
            Case(4, ["drafts", "edit-attachment", id, attachment, "--alt", "x", "--if-revision", "1"]),
            Case(2, ["drafts", "edit-attachment", id, attachment]),
            Case(0, ["drafts", "fetch", id, attachment, "-o", files.copy]),
            Case(3, ["drafts", "fetch", id, UUID().uuidString, "-o", files.copy]),
            Case(2, ["drafts", "fetch", id, attachment]),
            Case(4, ["drafts", "detach", id, attachment, "--if-revision", "1"]),
            Case(0, ["drafts", "detach", id, attachment]),
            Case(3, ["drafts", "detach", id, attachment]),
        ]
        for testCase in cases {
            try await check(testCase, on: daemon)
        }
    }

    /// Runs `testCase` against `daemon` and checks its status (and words).
    func check(_ testCase: Case, on daemon: Daemon) async throws {
        let result = try await daemon.prefsctl(testCase.arguments)
        #expect(result.status == testCase.status, "\(testCase): \(result.stderr)")
        if let says = testCase.says {
            #expect((result.stdout + result.stderr).contains(says), "\(testCase): \(result.stdout)\(result.stderr)")
        }
    }

    @Test func everyVerbExits69WhenTheDaemonIsNotThere() async throws {
        let socket = "/tmp/prefsd-missing-\(UUID().uuidString.prefix(6)).sock"
        let id = UUID().uuidString
        let verbs: [[String]] = [
            ["status"], ["get", "a.b"], ["get", "a.b", "--explain"], ["set", "a.b", "1"], ["reset", "a.b"], ["list"],
            ["watch", "--count", "1"], ["lock", "a.b", "--scope", "/a"], ["unlock", "a.b", "--scope", "/a"],
            ["schema", "list"], ["schema", "show", "a.b"], ["schema", "load", "-"], ["dump"], ["load", "-"],
            ["drafts", "list"], ["drafts", "create", "--account", "alice"], ["drafts", "show", id],
            ["drafts", "edit", id, "--text", "x"], ["drafts", "delete", id], ["drafts", "validate", id],
            ["drafts", "attach", id, "/etc/hostname"], ["drafts", "detach", id, id],
            ["drafts", "edit-attachment", id, id, "--alt", "x"], ["drafts", "fetch", id, id, "-o", "/tmp/x"],
            ["drafts", "watch", id], ["sync"], ["sync", "--wait"], ["conflicts"],
        ]
        for arguments in verbs {
            // `load -` reads a dump, `schema load -` an object of schemas.
            let stdin = Data((arguments.first == "load" ? #"{"format": 1}"# : "{}").utf8)
            let result = try await CommandResult.run("prefsctl", ["--socket", socket] + arguments, stdin: stdin)
            #expect(result.status == 69, "prefsctl \(arguments.joined(separator: " ")): \(result.stderr)")
            #expect(result.stderr.contains(socket), "prefsctl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    @Test func aWatchTheDaemonEndsExits69AndOneEndedByCountOrTimeoutExits0() async throws {
        let daemon = try await Daemon()
        try await daemon.client.set("a.b", to: 1)
        let socket = daemon.socketPath
        let stopped = Task { try await CommandResult.run("prefsctl", ["--socket", socket, "watch", "a.b"]) }
        // The watch is open once the daemon counts it.
        try await waitUntil("the daemon counts the watch") { try await daemon.client.status().counts.watchers > 0 }
        await daemon.stop()
        let result = try await stopped.value
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("prefsd went away"))
        #expect(result.stderr.contains("--since 1"))
    }
}
