import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// `compose-example --socket` on a user's daemon touches only an account of its own and leaves
/// nothing behind: not when it succeeds, not when it fails, not when it is interrupted.
@Suite(.timeLimit(.minutes(3))) struct ComposeExampleTests {
    /// What the example could leave in a store: every value, lock and schema, and every draft.
    private static func contents(of client: PrefsClient) async throws -> (PrefsDump, [Draft]) {
        (try await client.dump(scope: .root), try await client.drafts(account: nil, thread: nil))
    }

    @Test func aRunLeavesTheStoreAsItFoundIt() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.set(ComposeRules.requireAltTextKey, to: false, scope: "/accounts/alice")
        _ = try await client.createDraft(DraftInput(account: "alice", text: "mine", thread: "thread-1"))
        let before = try await Self.contents(of: client)

        let run = try await CommandResult.run("compose-example", ["--socket", daemon.socketPath])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("after choosing expanded statuses"))
        #expect(try await Self.contents(of: client) == before)
    }

    @Test func aFailedRunRemovesWhatItMadeBeforeFailing() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        // The example's per-thread limit is refused: it fails midway, with values and drafts made.
        try await client.set(ComposeRules.maxCharactersKey, to: 500)
        try await client.lock(ComposeRules.maxCharactersKey, scope: .root)
        let before = try await Self.contents(of: client)

        let run = try await CommandResult.run("compose-example", ["--socket", daemon.socketPath])
        #expect(run.status == 1)
        #expect(run.stdout.contains("after the account requires alt text") && run.stdout.contains("failed: "))
        #expect(try await Self.contents(of: client) == before)
    }

    @Test func anInterruptedRunRemovesWhatItMade() async throws {
        // An override keeps alt text optional: the example waits for its drafts to need it, for ever.
        let daemon = try await Daemon(arguments: ["--override", "\(ComposeRules.requireAltTextKey)=false"])
        let client = daemon.client
        let before = try await Self.contents(of: client)
        let output = daemon.folder.appending(path: "example.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let printing = try FileHandle(forWritingTo: output)
        let example = try ChildProcess(
            CommandResult.binaries.appending(path: "compose-example").path, ["--socket", daemon.socketPath],
            standardOutput: .descriptor(printing.fileDescriptor))
        try printing.close()
        // Interrupted while it waits, with drafts, an attachment and a value made.
        try await waitUntil("the example has attached a picture") {
            (try? String(contentsOf: output, encoding: .utf8))?.contains("— after attaching a picture") == true
        }
        #expect(try await client.resolve(ComposeRules.requireAltTextKey, scope: "/accounts").source == .override)
        #expect(await example.stop(signal: SIGINT) == 1)
        let printed = try String(contentsOf: output, encoding: .utf8)
        #expect(printed.contains("— after attaching a picture") && printed.hasSuffix("interrupted\n"))
        #expect(try await Self.contents(of: client) == before)
    }
}
