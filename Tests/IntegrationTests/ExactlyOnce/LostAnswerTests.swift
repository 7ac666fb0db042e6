import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// A daemon that dies after it committed a write and before it answered — and is restarted at
/// once, as systemd's `Restart=` would — loses nothing and applies nothing twice: the client,
/// which sent the write with an `Idempotency-Key`, sends it again with the same key and gets the
/// first answer. Without a restart, the client says the outcome is unknown.
@Suite("A lost answer", .timeLimit(.minutes(3)))
struct LostAnswerTests {
    typealias Backend = IdempotencyKeyTests.Backend

    /// Runs `write` through a client while the daemon ends right after committing it
    /// (`PREFSD_DEBUG_EXIT_AFTER_COMMITS=1`, a debug build's fault), then restarts the daemon;
    /// returns what `write` returned.
    static func surviving<T: Sendable>(
        _ daemon: Daemon, _ write: @escaping @Sendable (PrefsClient) async throws -> T
    ) async throws -> T {
        daemon.environment = ["PREFSD_DEBUG_EXIT_AFTER_COMMITS": "1"]
        await daemon.stop()
        try await daemon.start()
        let client = PrefsClient(transport: UnixSocketTransport(socketPath: daemon.socketPath), writeRetryDeadline: .seconds(30))
        let writing = Task { try await write(client) }
        #expect(await daemon.exited() == 137, "the daemon was to end after the commit")
        daemon.environment = [:]
        try await daemon.start()
        return try await writing.value
    }

    @Test(arguments: Backend.enabled)
    func aRetryAfterTheDaemonDiedGetsTheFirstAnswer(_ backend: Backend) async throws {
        try await IdempotencyKeyTests.withDaemon(backend) { daemon in
            let base = try await daemon.client.set("lost.a", to: 1, scope: "/")

            // A conditional write: answered 200 with its revision — not 412 because of itself.
            let set = try await Self.surviving(daemon) { client in
                try await client.set("lost.a", to: 2, scope: "/", ifRevision: base.revision)
            }
            #expect(set.revision == base.revision + 1)
            #expect(try await daemon.client.status().revision == set.revision, "applied once")
            #expect(try await daemon.client.resolve("lost.a", scope: "/").value == 2)

            // A draft is created once.
            let draft = try await Self.surviving(daemon) { client in
                try await client.createDraft(DraftInput(account: "alice", text: "once"))
            }
            #expect(try await daemon.client.drafts(account: "alice", thread: nil).map(\.id) == [draft.id])

            // An attachment is stored once, its bytes sent again whole.
            let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
            let attached = try await Self.surviving(daemon) { client in
                try await client.addAttachment(
                    to: draft.id, AttachmentUpload(filename: "a.bin", kind: .file), ifRevision: draft.revision,
                    length: Int64(bytes.count)
                ) { AsyncThrowingStream { $0.yield(bytes); $0.finish() } }
            }
            let stored = try await daemon.client.draft(draft.id)
            #expect(stored.attachments.map(\.id) == [attached.attachment.id])
            #expect(stored.revision == draft.revision + 1)
            var downloaded = Data()
            for try await chunk in try await daemon.client.attachmentData(attached.attachment.id, of: draft.id).bytes {
                downloaded.append(chunk)
            }
            #expect(downloaded == bytes)
        }
    }

    /// `prefsctl` sends a change again after a lost answer too; with no daemon back before its
    /// deadline it exits 5, saying the outcome is unknown and how to check.
    @Test func prefsctlRetriesThenSaysTheOutcomeIsUnknown() async throws {
        let daemon = try await Daemon()
        try await withCleanup {
            daemon.environment = ["PREFSD_DEBUG_EXIT_AFTER_COMMITS": "1"]
            await daemon.stop()
            try await daemon.start()
            let socket = daemon.socketPath
            let setting = Task { try await CommandResult.run("prefsctl", ["--socket", socket, "set", "lost.b", "5"]) }
            #expect(await daemon.exited() == 137)
            daemon.environment = [:]
            try await daemon.start()
            let set = try await setting.value
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try await daemon.client.status().revision == 1)

            daemon.environment = ["PREFSD_DEBUG_EXIT_AFTER_COMMITS": "1"]
            await daemon.stop()
            try await daemon.start()
            let unknown = try await daemon.prefsctl("--retry-for", "1", "set", "lost.b", "6")
            await daemon.exited()
            #expect(unknown.status == 5)
            #expect(unknown.stderr.contains("may or may not have been stored"), "\(unknown.stderr)")
            #expect(unknown.stderr.contains("prefsctl get"))
            // The key it sent, which it names, is one of `IdempotencyKey`'s: a version 7 UUID.
            let key = try #require(unknown.stderr.firstMatch(of: /Idempotency-Key \(?([0-9A-F-]{36})/)?.1)
            #expect(try #require(UUID(uuidString: String(key))).uuid.6 >> 4 == 7, "\(unknown.stderr)")
        } cleanup: {
            await daemon.stop()
        }
    }
}
