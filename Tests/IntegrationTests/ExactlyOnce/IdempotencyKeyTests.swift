import Foundation
import PrefsClient
import PrefsClientCore
import PrefsKit
import TestHarness
import Testing

/// `Idempotency-Key` on every write, on SQLite and on PostgreSQL: a repeat gets the first
/// outcome and changes nothing — across a restart, and through another host of the same
/// database; the same key with another request is refused; concurrent repeats apply once. (Keys
/// expiring after the retention: `IdempotencyRetentionTests`, on the engine's hand-set clock.)
@Suite("Idempotency-Key", .timeLimit(.minutes(3)))
struct IdempotencyKeyTests {
    /// Where a test's daemons keep their data.
    enum Backend: String, CustomTestStringConvertible, CaseIterable {
        case sqlite, postgres

        var testDescription: String { rawValue }

        /// The backends this run can test: PostgreSQL where a test server is given (always in CI).
        static var enabled: [Backend] { PostgresTestDatabase.isEnabled ? allCases : [.sqlite] }
    }

    /// Runs `body` with a daemon on `backend`, started with `arguments`.
    static func withDaemon<T>(
        _ backend: Backend, arguments: [String] = [], _ body: (Daemon) async throws -> T
    ) async throws -> T {
        switch backend {
        case .sqlite:
            let daemon = try await Daemon(arguments: arguments)
            return try await withCleanup { try await body(daemon) } cleanup: { await daemon.stop() }
        case .postgres:
            return try await withPostgresDatabase { database in
                let daemon = try await Daemon(arguments: arguments, postgresURL: database.url)
                return try await withCleanup { try await body(daemon) } cleanup: { await daemon.stop() }
            }
        }
    }

    /// One raw request with an `Idempotency-Key`.
    static func send(
        _ daemon: Daemon, _ method: String, _ target: String, body: String? = nil, key: String,
        headers: [(String, String)] = []
    ) async throws -> (status: Int, code: String?, body: String) {
        try await send(daemon.socketPath, method, target, body: body, key: key, headers: headers)
    }

    /// One raw request with an `Idempotency-Key` to the daemon at `socket`.
    @Sendable static func send(
        _ socket: String, _ method: String, _ target: String, body: String? = nil, key: String,
        headers: [(String, String)] = []
    ) async throws -> (status: Int, code: String?, body: String) {
        let response = try await UnixSocketTransport(socketPath: socket).send(
            HTTPRequestSpec(method: method, target: target, body: body.map { Data($0.utf8) }, headers: [("Idempotency-Key", key)] + headers))
        let code = (try? JSONDecoder().decode(ErrorBody.self, from: response.body))?.error.code
        return (response.status, code, String(decoding: response.body, as: UTF8.self))
    }

    /// The store's revision.
    static func revision(_ daemon: Daemon) async throws -> Revision {
        try await daemon.client.status().revision
    }

    @Test(arguments: Backend.enabled)
    func aRepeatGetsTheFirstAnswerAndChangesNothing(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            let first = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "1", key: "k-1")
            #expect(first.status == 200)
            _ = try await daemon.client.set("idem.a", to: 2, scope: "/")
            let before = try await Self.revision(daemon)
            let repeated = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "1", key: "k-1")
            #expect(repeated.status == first.status)
            #expect(repeated.body == first.body)
            #expect(try await Self.revision(daemon) == before)
            #expect(try await daemon.client.resolve("idem.a", scope: "/").value == 2)
        }
    }

    @Test(arguments: Backend.enabled)
    func theSameKeyWithAnotherRequestIsRefused(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            _ = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "1", key: "k-1")
            let before = try await Self.revision(daemon)
            for (method, target, body) in [
                ("PUT", "/v1/prefs/idem.a?scope=/", "2"), ("PUT", "/v1/prefs/idem.a?scope=/x", "1"),
                ("DELETE", "/v1/prefs/idem.a?scope=/", nil), ("PUT", "/v1/locks/idem.a?scope=/", nil),
            ] {
                let other = try await Self.send(daemon, method, target, body: body, key: "k-1")
                #expect(other.status == 422, "\(method) \(target): \(other.body)")
                #expect(other.code == "idempotency_key_reused")
            }
            let conditional = try await Self.send(
                daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "1", key: "k-1", headers: [("If-Match", "\"1\"")])
            #expect(conditional.status == 422)
            #expect(try await Self.revision(daemon) == before)
            #expect(try await daemon.client.resolve("idem.a", scope: "/").value == 1)
        }
    }

    /// A refusal is an outcome too: the same request sent again is refused again, even once the
    /// store would now let it through — else a client could be told "refused" for a write that a
    /// copy of it, still on its way, later made.
    @Test(arguments: Backend.enabled)
    func aRefusalIsKeptAsTheOutcome(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            _ = try await daemon.client.set("idem.a", to: 1, scope: "/")
            let stale = [("If-Match", "\"0\"")]
            let refused = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "5", key: "k-r", headers: stale)
            #expect(refused.status == 412)
            _ = try await daemon.client.reset("idem.a", scope: "/", recursive: false)
            // Now revision 0 at / is current: the request alone would succeed.
            let repeated = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "5", key: "k-r", headers: stale)
            #expect(repeated.status == 412)
            #expect(repeated.code == "stale_revision")
            #expect(try await daemon.client.resolve("idem.a", scope: "/").isSet == false)
            let fresh = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "5", key: "k-new", headers: stale)
            #expect(fresh.status == 200)
        }
    }

    /// Every kind of write takes the header: sent twice, each answers alike and the second
    /// changes nothing.
    @Test(arguments: Backend.enabled)
    func everyWriteTakesAKey(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            let draft = try await daemon.client.createDraft(DraftInput(account: "alice", text: "hello"))
            let attached = try await daemon.client.addAttachment(
                to: draft.id, AttachmentUpload(filename: "a.txt", kind: .file), ifRevision: nil,
                bytes: AsyncThrowingStream { $0.yield(Data("bytes".utf8)); $0.finish() })
            let drafts = "/v1/drafts/\(draft.id.uuidString)"
            let attachment = "\(drafts)/attachments/\(attached.attachment.id.uuidString)"
            let dump = #"{"format":1,"locks":[],"schemas":{},"scope":"/","values":[{"key":"idem.l","scope":"/","value":3}]}"#
            let writes: [(String, String, String?)] = [
                ("PUT", "/v1/prefs/idem.a?scope=/", "1"),
                ("POST", "/v1/prefs:batch", #"{"operations":[{"op":"set","key":"idem.b","scope":"/","value":2}]}"#),
                ("PUT", "/v1/locks/idem.a?scope=/", nil),
                ("DELETE", "/v1/locks/idem.a?scope=/", nil),
                ("DELETE", "/v1/prefs/idem.a?scope=/", nil),
                ("PUT", "/v1/schema/idem.s", #"{"type":"int","default":1}"#),
                ("PUT", "/v1/schema", #"{"idem.t":{"type":"bool","default":true}}"#),
                ("POST", "/v1/load", dump),
                ("POST", "/v1/drafts", #"{"account":"alice","text":"once"}"#),
                ("PATCH", drafts, #"{"text":"changed"}"#),
                ("POST", "\(drafts)/attachments?filename=b.txt&kind=file", "more bytes"),
                ("PATCH", attachment, #"{"altText":"alt"}"#),
                ("DELETE", attachment, nil),
                ("DELETE", drafts, nil),
            ]
            for (index, (method, target, body)) in writes.enumerated() {
                let key = "every-\(index)"
                let first = try await Self.send(daemon, method, target, body: body, key: key)
                #expect((200..<300).contains(first.status), "\(method) \(target): \(first.body)")
                let before = try await Self.revision(daemon)
                let repeated = try await Self.send(daemon, method, target, body: body, key: key)
                #expect(repeated.status == first.status, "\(method) \(target)")
                #expect(repeated.body == first.body, "\(method) \(target)")
                #expect(try await Self.revision(daemon) == before, "\(method) \(target) was applied again")
            }
            #expect(try await daemon.client.drafts(account: "alice", thread: nil).map(\.text) == ["once"])
        }
    }

    /// Many copies of one request at once: exactly one is carried out; each copy is answered its
    /// outcome or `request_in_progress`, never a second draft.
    @Test(arguments: Backend.enabled)
    func concurrentRepeatsApplyOnce(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            let socket = daemon.socketPath
            let answers = try await withThrowingTaskGroup(of: (Int, String?, String).self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await Self.send(socket, "POST", "/v1/drafts", body: #"{"account":"bob","text":"x"}"#, key: "same")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = answers.filter { $0.0 == 201 }
            #expect(!created.isEmpty)
            #expect(Set(created.map(\.2)).count == 1, "every 201 answers the same draft")
            #expect(answers.allSatisfy { $0.0 == 201 || $0.1 == "request_in_progress" }, "\(answers)")
            #expect(try await daemon.client.drafts(account: "bob", thread: nil).count == 1)
        }
    }

    @Test(arguments: Backend.enabled)
    func aKeyOutlivesARestart(_ backend: Backend) async throws {
        try await Self.withDaemon(backend) { daemon in
            let first = try await Self.send(daemon, "POST", "/v1/drafts", body: #"{"account":"carol","text":"x"}"#, key: "k-restart")
            #expect(first.status == 201)
            await daemon.expectCleanStop()
            try await daemon.start()
            let repeated = try await Self.send(
                daemon, "POST", "/v1/drafts", body: #"{"account":"carol","text":"x"}"#, key: "k-restart")
            #expect(repeated.status == 201)
            #expect(repeated.body == first.body)
            #expect(try await daemon.client.drafts(account: "carol", thread: nil).count == 1)
        }
    }

    @Test func aBadKeyIsRefused() async throws {
        try await Self.withDaemon(.sqlite) { daemon in
            for key in [String(repeating: "k", count: 256), "with space", "tab\tkey"] {
                let answer = try await Self.send(daemon, "PUT", "/v1/prefs/idem.a?scope=/", body: "1", key: key)
                #expect(answer.status == 400, "\(key)")
                #expect(answer.code == "invalid_request")
            }
            #expect(try await Self.revision(daemon) == 0)
        }
    }

    /// The keys clients make are version 7 UUIDs that begin with the time they were made, so
    /// that the daemon's index of keys grows at its end; each is new.
    @Test func clientKeysBeginWithTheTime() throws {
        // Half-way through each millisecond, so that no rounding of the Double moves it.
        func millisecond(_ index: Int) -> Date { Date(timeIntervalSince1970: 1_764_000_000 + (Double(index) + 0.5) / 1000) }
        let key = IdempotencyKey.make(at: millisecond(123))
        let uuid = try #require(UUID(uuidString: key)).uuid
        #expect(key.count == 36)
        #expect(uuid.6 >> 4 == 7, "version 7")
        #expect(uuid.8 >> 6 == 0b10, "RFC 9562's variant")
        let milliseconds = [uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(milliseconds == 1_764_000_000_123)

        let keys = (0..<1000).map { IdempotencyKey.make(at: millisecond($0)) }
        #expect(Set(keys).count == keys.count, "each key is new")
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "a later millisecond sorts after")
        #expect(Set(keys.map { $0.suffix(12) }).count == keys.count, "and the rest is random")
    }

    /// Two hosts of one PostgreSQL database share the keys: a request repeated through the other
    /// host gets the first answer; the same key with another request is refused there too.
    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func hostsShareTheKeys() async throws {
        try await withPostgresDatabase { database in
            let a = try await Daemon(postgresURL: database.url)
            let b = try await Daemon(postgresURL: database.url)
            try await withCleanup {
                let first = try await Self.send(a, "POST", "/v1/drafts", body: #"{"account":"dora","text":"x"}"#, key: "k-hosts")
                let repeated = try await Self.send(b, "POST", "/v1/drafts", body: #"{"account":"dora","text":"x"}"#, key: "k-hosts")
                #expect(repeated.status == 201)
                #expect(repeated.body == first.body)
                let other = try await Self.send(b, "POST", "/v1/drafts", body: #"{"account":"dora","text":"y"}"#, key: "k-hosts")
                #expect(other.status == 422)
                #expect(try await b.client.drafts(account: "dora", thread: nil).count == 1)
                // Concurrent copies through both hosts: one draft.
                let sockets = [a.socketPath, b.socketPath]
                let answers = try await withThrowingTaskGroup(of: (Int, String?, String).self) { group in
                    for index in 0..<12 {
                        group.addTask {
                            try await Self.send(
                                sockets[index % 2], "POST", "/v1/drafts", body: #"{"account":"eve","text":"x"}"#, key: "k-both")
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(answers.filter { $0.0 == 201 }.map(\.2)).count == 1)
                #expect(answers.allSatisfy { $0.0 == 201 || $0.1 == "request_in_progress" }, "\(answers)")
                #expect(try await a.client.drafts(account: "eve", thread: nil).count == 1)
            } cleanup: {
                await a.stop()
                await b.stop()
            }
        }
    }
}
