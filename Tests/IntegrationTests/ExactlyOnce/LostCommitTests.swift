import Foundation
import PrefsClient
import PrefsKit
import Synchronization
import TestHarness
import Testing

/// A host whose connection to PostgreSQL is cut right after PostgreSQL answered a commit, before
/// the host read the answer (``CommitCutProxy``), finds out on a new connection that the batch
/// committed: the client gets the write's real outcome, once — a conditional write 200, never the
/// 412 that running the batch again would give — the store holds it once, and the watchers on
/// every host see it once.
@Suite("A commit whose answer is lost", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(3)))
struct LostCommitTests {
    /// `Scripts/commit-cut-proxy.py` between a host and PostgreSQL.
    final class CommitCutProxy: Sendable {
        let port: Int
        private let process: ChildProcess
        private let input: FileHandle
        private let said: Said

        /// What the proxy has said, a line each, and how many of each line were waited for.
        private final class Said: Sendable {
            let state = Mutex<(lines: [String], taken: [String: Int])>(([], [:]))
        }

        /// A proxy to the server of `url`.
        init(to url: String) async throws {
            let components = URLComponents(string: url)!
            let script = Checkout.url("Scripts/commit-cut-proxy.py").path
            let (stdin, stdout) = (Pipe(), Pipe())
            process = try ChildProcess(
                "/usr/bin/python3", [script, "--target", "\(components.host!):\(components.port!)"],
                standardInput: .descriptor(stdin.fileHandleForReading.fileDescriptor),
                standardOutput: .descriptor(stdout.fileHandleForWriting.fileDescriptor))
            // The child's ends are the child's: the proxy's output ends when it does.
            try stdin.fileHandleForReading.close()
            try stdout.fileHandleForWriting.close()
            input = stdin.fileHandleForWriting
            // The proxy's lines are read on a thread of their own until it ends.
            let output = stdout.fileHandleForReading
            let said = Said()
            self.said = said
            Thread {
                var line = Data()
                while let byte = try? output.read(upToCount: 1), let first = byte.first {
                    guard first == UInt8(ascii: "\n") else {
                        line.append(first)
                        continue
                    }
                    let text = String(decoding: line, as: UTF8.self)
                    said.state.withLock { $0.lines.append(text) }
                    line = Data()
                }
            }.start()
            try await waitUntil("commit-cut-proxy.py says where it listens") { said.state.withLock { !$0.lines.isEmpty } }
            let first = said.state.withLock { $0.lines[0] }
            guard first.hasPrefix("listening "), let port = Int(first.dropFirst("listening ".count)) else {
                throw PrefsError(.unavailable, "commit-cut-proxy.py said '\(first)'")
            }
            self.port = port
        }

        deinit {
            try? input.close()
            process.send(SIGTERM)
        }

        /// `url` with the proxy in place of its server.
        func url(_ url: String) -> String {
            var components = URLComponents(string: url)!
            components.port = port
            return components.string!
        }

        /// Arms the proxy, and returns once it is armed: the next commit's answer is lost.
        func arm() async throws {
            try input.write(contentsOf: Data("arm\n".utf8))
            try await next("armed", "the proxy is armed")
        }

        /// Waits for the proxy to say it cut one more commit's answer: a request answered
        /// without committing leaves nothing to cut, and the wait then fails, naming it.
        func waitForCut() async throws {
            try await next("cut", "the proxy cut a commit's answer")
        }

        /// Waits until the proxy has said `line` once more than was waited for.
        private func next(_ line: String, _ condition: String) async throws {
            try await waitUntil(condition) {
                said.state.withLock { said in
                    guard said.lines.filter({ $0 == line }).count > said.taken[line, default: 0] else { return false }
                    said.taken[line, default: 0] += 1
                    return true
                }
            }
        }
    }

    @Test func everyWriteKindGetsItsRealOutcomeOnce() async throws {
        try await withPostgresDatabase { database in
            let proxy = try await CommitCutProxy(to: database.url)
            let a = try await Daemon(postgresURL: proxy.url(database.url))
            let b = try await Daemon(postgresURL: database.url)
            try await withCleanup {
                let (client, other) = (a.client, b.client)
                let start = try await client.set("cut.a", to: 0, scope: "/")
                let watchers = [
                    client.watch(WatchRequest(prefixes: ["cut."], since: start.revision)),
                    other.watch(WatchRequest(prefixes: ["cut."], since: start.revision)),
                    client.watch(WatchRequest(since: start.revision, account: "alice")),
                    other.watch(WatchRequest(since: start.revision, account: "alice")),
                ]
                /// Runs `write` through host A with its commit's answer lost.
                func cut<T: Sendable>(_ write: () async throws -> T) async throws -> T {
                    try await proxy.arm()
                    let result = try await write()
                    try await proxy.waitForCut()
                    return result
                }

                let set = try await cut { try await client.set("cut.a", to: 1, scope: "/", ifRevision: start.revision) }
                #expect(set.revision == start.revision + 1)
                let batch = try await cut {
                    try await client.apply(
                        PreferenceBatch(operations: [.set("cut.b", 2, scope: "/"), .set("cut.c", 3, scope: "/x")]))
                }
                #expect(batch.revisions == [set.revision + 1, set.revision + 2])
                let locked = try await cut { try await client.lock("cut.a", scope: "/x", ifRevision: 0) }
                let unlocked = try await cut { try await client.unlock("cut.a", scope: "/x", ifRevision: locked.revision) }
                #expect(unlocked.removed == 1)
                let reset = try await cut { try await client.reset("cut.b", scope: "/", recursive: false, ifRevision: batch.revisions![0]) }
                #expect(reset.removed == 1)
                let schema = try await cut { try await client.register(schemas: ["cut.s": PreferenceSchema(type: .int, defaultValue: 1)]) }
                #expect(schema.revision == reset.revision + 1)
                // Drafts write their rows at once, in a transaction that commits after the call.
                let draft = try await cut { try await client.createDraft(DraftInput(account: "alice", text: "once")) }
                var patch = DraftPatch()
                patch.text = .set("changed once")
                let edited = try await cut { [patch] in try await client.updateDraft(draft.id, patch, ifRevision: draft.revision) }
                #expect(edited.revision == draft.revision + 1)
                let attached = try await cut {
                    try await client.addAttachment(
                        to: draft.id, AttachmentUpload(filename: "a.txt", kind: .file), ifRevision: edited.revision, length: 5
                    ) { AsyncThrowingStream { $0.yield(Data("bytes".utf8)); $0.finish() } }
                }
                #expect(attached.draft.attachments.count == 1)

                let newest = try await client.status().revision
                try await other.waitForRevision(newest)
                #expect(try await other.resolve("cut.a", scope: "/").value == 1)
                #expect(try await other.resolve("cut.b", scope: "/").isSet == false)
                #expect(try await other.drafts(account: "alice", thread: nil).map(\.attachments.count) == [1])

                // The preference watchers' last change is the schema's, the drafts' the attachment's.
                var seen: [[Revision]] = []
                for (watcher, last) in zip(watchers, [schema.revision, schema.revision, newest, newest]) {
                    seen.append(try await collect(watcher, through: last).map(\.revision))
                }
                let preferences = seen[0], drafts = seen[2]
                #expect(seen[1] == preferences, "both hosts' watchers saw the same preference changes")
                #expect(seen[3] == drafts, "both hosts' watchers saw the same draft changes")
                let all = (preferences + drafts).sorted()
                #expect(all == Array((start.revision + 1)...newest), "every change once, none twice, none missing")
            } cleanup: {
                await a.stop()
                await b.stop()
            }
        }
    }

    /// The same without an `Idempotency-Key` (a raw client, or an app's `PostgresStore`): nothing
    /// stored under a key can answer for the batch, so only finding out what became of the
    /// commit — never running it again — gives the real outcome.
    @Test func aWriteWithoutAKeyGetsItsRealOutcomeOnce() async throws {
        try await withPostgresDatabase { database in
            let proxy = try await CommitCutProxy(to: database.url)
            let a = try await Daemon(postgresURL: proxy.url(database.url))
            let b = try await Daemon(postgresURL: database.url)
            try await withCleanup {
                let start = try await a.client.set("cut.a", to: 0, scope: "/")
                let watcher = b.client.watch(WatchRequest(prefixes: ["cut."], since: start.revision))

                try await proxy.arm()
                let set = try await a.raw("PUT", "/v1/prefs/cut.a?scope=/", body: "1", headers: [("If-Match", "\(start.revision)")])
                try await proxy.waitForCut()
                #expect(set.status == 200, "a conditional write that took effect: \(set.body)")
                #expect(set.body == #"{"revision":\#(start.revision + 1)}"#)

                try await proxy.arm()
                let created = try await a.raw("POST", "/v1/drafts", body: #"{"account":"zoe","text":"once"}"#)
                try await proxy.waitForCut()
                #expect(created.status == 201, "\(created.body)")

                try await proxy.arm()
                let batch = try await a.raw(
                    "POST", "/v1/prefs:batch", body: #"{"operations":[{"op":"set","key":"cut.b","scope":"/","value":2}]}"#)
                try await proxy.waitForCut()
                #expect(batch.status == 200, "\(batch.body)")

                let newest = try await a.client.status().revision
                try await b.client.waitForRevision(newest)
                #expect(try await b.client.drafts(account: "zoe", thread: nil).count == 1)
                #expect(try await b.client.resolve("cut.a", scope: "/").value == 1)
                let seen = try await collect(watcher, through: newest).map(\.revision)
                #expect(seen == [start.revision + 1, newest], "each preference change once")
                #expect(newest == start.revision + 3, "three changes, none twice")
            } cleanup: {
                await a.stop()
                await b.stop()
            }
        }
    }
}
