import Foundation
import PrefsClient
import PrefsKit
import SampleImages
import TestHarness
import Testing

/// Named tokens on the TCP listener: every endpoint answers each role inside and outside its
/// scope as the roles say, and a refusal changes nothing; a scoped token's watches and audit log
/// hold its scope only; tokens are known, and revoked, on every host sharing a database at once —
/// also on an open keep-alive connection and a running watch; the file token stays an admin; and
/// no secret shows anywhere.
@Suite("Named tokens: roles bounded by scopes, on every host", .timeLimit(.minutes(5)))
struct TokenAccessTests {
    /// The scope the matrix's tokens are bounded by, and the scopes and accounts inside and
    /// outside it.
    static let tokenScope: ScopePath = "/accounts/alice"
    static func scope(inside: Bool) -> ScopePath { inside ? "/accounts/alice/app" : "/accounts/bob" }
    static func account(inside: Bool) -> String { inside ? "alice" : "bob" }

    /// A request of the matrix, made as the socket's owner prepares it: for a draft, a new draft
    /// of the account inside or outside the scope; for a reset, a value to reset.
    struct Probe: Sendable {
        var name: String
        /// The least role it needs.
        var needs: AccessRole
        /// Whether it acts at no scope of its own: then only its role counts (`storeWide`: and a
        /// grant at `/`).
        var unscoped = false
        var storeWide = false
        /// The request, inside or outside the scope, built on what the owner made first.
        var make: @Sendable (_ owner: PrefsClient, _ inside: Bool) async throws -> (method: String, target: String, body: Data?)
    }

    static func json(_ text: String) -> Data { Data(text.utf8) }

    /// A draft of the account inside or outside, with one attachment.
    static func draft(_ owner: PrefsClient, _ inside: Bool) async throws -> (draft: UUID, attachment: UUID) {
        let draft = try await owner.createDraft(DraftInput(account: account(inside: inside), text: "hello", thread: "t-\(inside)"))
        let added = try await owner.addAttachment(
            to: draft.id, AttachmentUpload(filename: "a.png"), data: SampleImage.png(width: 2, height: 2))
        return (draft.id, added.attachment.id)
    }

    /// Every endpoint of the API.
    static let probes: [Probe] = [
        Probe(name: "status", needs: .reader, unscoped: true) { _, _ in ("GET", "/v1/status", nil) },
        Probe(name: "get explained", needs: .reader) { _, inside in ("GET", "/v1/prefs/m.k?explain=1&scope=\(scope(inside: inside))", nil) },
        Probe(name: "list", needs: .reader) { _, inside in ("GET", "/v1/prefs?scope=\(scope(inside: inside))", nil) },
        Probe(name: "history", needs: .reader) { _, inside in ("GET", "/v1/prefs/m.k/history?scope=\(scope(inside: inside))", nil) },
        Probe(name: "diff", needs: .reader) { _, inside in ("GET", "/v1/diff?from=1&scope=\(scope(inside: inside))", nil) },
        Probe(name: "dump", needs: .reader) { _, inside in ("GET", "/v1/dump?scope=\(scope(inside: inside))", nil) },
        Probe(name: "audit log", needs: .reader) { _, inside in ("GET", "/v1/changes?scope=\(scope(inside: inside))", nil) },
        Probe(name: "schemas", needs: .reader, unscoped: true) { _, _ in ("GET", "/v1/schema", nil) },
        Probe(name: "a schema", needs: .reader, unscoped: true) { _, _ in ("GET", "/v1/schema/m.s", nil) },
        Probe(name: "drafts of an account", needs: .reader) { _, inside in ("GET", "/v1/drafts?account=\(account(inside: inside))", nil) },
        Probe(name: "a draft", needs: .reader) { owner, inside in
            ("GET", "/v1/drafts/\(try await draft(owner, inside).draft)", nil)
        },
        Probe(name: "a draft's validation", needs: .reader) { owner, inside in
            ("GET", "/v1/drafts/\(try await draft(owner, inside).draft)/validation", nil)
        },
        Probe(name: "an attachment's bytes", needs: .reader) { owner, inside in
            let (draft, attachment) = try await draft(owner, inside)
            return ("GET", "/v1/drafts/\(draft)/attachments/\(attachment)/data", nil)
        },
        Probe(name: "a thread", needs: .reader, unscoped: true) { _, inside in ("GET", "/v1/threads/t-\(inside)", nil) },
        Probe(name: "set", needs: .writer) { _, inside in ("PUT", "/v1/prefs/m.k?scope=\(scope(inside: inside))", json("1")) },
        Probe(name: "reset", needs: .writer) { owner, inside in
            try await owner.set("m.k", to: 7, scope: scope(inside: inside))
            return ("DELETE", "/v1/prefs/m.k?scope=\(scope(inside: inside))", nil)
        },
        Probe(name: "batch", needs: .writer) { _, inside in
            ("POST", "/v1/prefs:batch", json(#"{"operations":[{"op":"set","key":"m.k","scope":"\#(scope(inside: inside))","value":2}]}"#))
        },
        Probe(name: "revert", needs: .writer) { owner, inside in
            let first = try await owner.set("m.k", to: 30, scope: scope(inside: inside))
            try await owner.set("m.k", to: 31, scope: scope(inside: inside))
            return ("POST", "/v1/prefs:revert", json(#"{"key":"m.k","scope":"\#(scope(inside: inside))","toRevision":\#(first.revision)}"#))
        },
        Probe(name: "load", needs: .writer) { _, inside in
            let scope = scope(inside: inside)
            return ("POST", "/v1/load", json(#"{"format":1,"scope":"\#(scope)","values":[{"key":"m.k","scope":"\#(scope)","value":5}]}"#))
        },
        Probe(name: "create a draft", needs: .writer) { _, inside in
            ("POST", "/v1/drafts", json(#"{"account":"\#(account(inside: inside))","text":"new"}"#))
        },
        Probe(name: "edit a draft", needs: .writer) { owner, inside in
            ("PATCH", "/v1/drafts/\(try await draft(owner, inside).draft)", json(#"{"text":"edited"}"#))
        },
        Probe(name: "delete a draft", needs: .writer) { owner, inside in
            ("DELETE", "/v1/drafts/\(try await draft(owner, inside).draft)", nil)
        },
        Probe(name: "attach", needs: .writer) { owner, inside in
            ("POST", "/v1/drafts/\(try await draft(owner, inside).draft)/attachments?filename=b.png", SampleImage.png(width: 3, height: 3))
        },
        Probe(name: "edit an attachment", needs: .writer) { owner, inside in
            let (draft, attachment) = try await draft(owner, inside)
            return ("PATCH", "/v1/drafts/\(draft)/attachments/\(attachment)", json(#"{"altText":"a dot"}"#))
        },
        Probe(name: "detach", needs: .writer) { owner, inside in
            let (draft, attachment) = try await draft(owner, inside)
            return ("DELETE", "/v1/drafts/\(draft)/attachments/\(attachment)", nil)
        },
        // On a key of their own: a lock left by a refused unlock would refuse the sets of m.k.
        Probe(name: "lock", needs: .admin) { _, inside in ("PUT", "/v1/locks/m.l?scope=\(scope(inside: inside))", nil) },
        Probe(name: "unlock", needs: .admin) { owner, inside in
            try await owner.lock("m.l", scope: scope(inside: inside))
            return ("DELETE", "/v1/locks/m.l?scope=\(scope(inside: inside))", nil)
        },
        Probe(name: "load, replacing", needs: .admin) { _, inside in
            let scope = scope(inside: inside)
            return (
                "POST", "/v1/load?replace=1", json(#"{"format":1,"scope":"\#(scope)","values":[{"key":"m.k","scope":"\#(scope)","value":6}]}"#)
            )
        },
        Probe(name: "list tokens", needs: .admin, unscoped: true) { _, _ in ("GET", "/v1/tokens", nil) },
        Probe(name: "create a token", needs: .admin) { _, inside in
            let name = "made-\(UUID().uuidString.prefix(8))"
            return ("POST", "/v1/tokens", json(#"{"name":"\#(name)","role":"reader","scope":"\#(scope(inside: inside))"}"#))
        },
        Probe(name: "revoke a token", needs: .admin) { owner, inside in
            let name = "doomed-\(UUID().uuidString.prefix(8))"
            _ = try await owner.createToken(named: name, role: .reader, scope: scope(inside: inside))
            return ("DELETE", "/v1/tokens/\(name)", nil)
        },
        Probe(name: "register schemas", needs: .admin, unscoped: true, storeWide: true) { _, _ in
            ("PUT", "/v1/schema", json(#"{"m.s":{"type":"string","default":"b"}}"#))
        },
        Probe(name: "register a schema", needs: .admin, unscoped: true, storeWide: true) { _, _ in
            ("PUT", "/v1/schema/m.s", json(#"{"type":"string","default":"c"}"#))
        },
        Probe(name: "metrics", needs: .admin, unscoped: true, storeWide: true) { _, _ in ("GET", "/v1/metrics", nil) },
        Probe(name: "watch", needs: .reader) { _, inside in ("GET", "/v1/watch?key=m.k&scope=\(scope(inside: inside))", nil) },
        Probe(name: "console sign-in link", needs: .reader) { _, inside in
            ("POST", "/v1/ui/links", json(#"{"scope":"\#(scope(inside: inside))"}"#))
        },
        Probe(name: "conflicts", needs: .reader) { _, inside in ("GET", "/v1/conflicts?scope=\(scope(inside: inside))", nil) },
        // A device pulls within its token's scope, whatever it is; a push needs a writer there.
        Probe(name: "a device's pull", needs: .reader, unscoped: true) { _, _ in ("POST", "/v1/sync", json(#"{"cursor":0}"#)) },
        Probe(name: "a device's push", needs: .writer, unscoped: true) { _, _ in
            let seq = Int64(Date().timeIntervalSince1970 * 1_000_000)
            return (
                "POST", "/v1/sync",
                json(#"{"cursor":0,"mutations":[{"seq":\#(seq),"key":"m.k","scope":"\#(tokenScope.path)","value":8,"base":0,"stamp":"1.0@"}]}"#)
            )
        },
    ]

    /// Waits until the daemon's TCP listener answers (it may start a moment after the socket).
    static func waitForListener(_ port: UInt16, token: String) async throws {
        try await waitUntil("the TCP listener answers") {
            guard let connection = try? TCPConnection(port: port) else { return false }
            return await connection.request("GET", "/v1/status", token: token).status == 200
        }
    }

    /// Every endpoint × reader, writer and admin at /accounts/alice, and an admin at `/` × a
    /// request inside and outside the scope: each is answered, or refused with 403 `forbidden`
    /// and nothing changed (the store's revision stays) — on SQLite, and on PostgreSQL.
    @Test func everyEndpointAnswersEachRoleInsideAndOutsideItsScope() async throws {
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken")
        try await Self.matrix(daemon, port)
        await daemon.expectCleanStop()
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func everyEndpointAnswersEachRoleInsideAndOutsideItsScopeOnPostgres() async throws {
        try await withPostgresDatabase { database in
            let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken", postgresURL: database.url)
            try await Self.matrix(daemon, port)
            await daemon.expectCleanStop()
        }
    }

    /// The matrix, against `daemon`, listening on `port`.
    static func matrix(_ daemon: Daemon, _ port: UInt16) async throws {
        let owner = daemon.client
        try await owner.register(schemas: ["m.s": PreferenceSchema(type: .string, defaultValue: "a")])
        try await owner.set("m.k", to: 1, scope: "/")
        var grants: [(label: String, role: AccessRole, scope: ScopePath, secret: String)] = []
        for role in AccessRole.allCases {
            let created = try await owner.createToken(named: "matrix-\(role)", role: role, scope: tokenScope)
            grants.append(("\(role) at \(tokenScope.path)", role, tokenScope, created.secret))
        }
        let root = try await owner.createToken(named: "matrix-root", role: .admin, scope: .root)
        grants.append(("admin at /", .admin, .root, root.secret))
        try await waitForListener(port, token: root.secret)
        #expect(
            probes.count == 39,
            "one probe per endpoint of the API but the console's files and sign-in, which need no token, and a device daemon's sync (GET /v1/sync, POST /v1/sync:now: SyncTests)"
        )

        for grant in grants {
            for probe in probes {
                for inside in probe.unscoped ? [true] : [true, false] {
                    let (method, target, body) = try await probe.make(owner, inside)
                    let before = try await owner.status().revision
                    let reaches = probe.storeWide ? grant.scope == .root : (probe.unscoped || inside || grant.scope == .root)
                    let allowed = grant.role >= probe.needs && reaches
                    let status: Int
                    let answer: String
                    if probe.name == "watch" {
                        // A watch's head is all there is to read before it streams.
                        let socket = try RawSocket(tcpPort: port)
                        socket.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(grant.secret)\r\n\r\n")
                        answer = await socket.read(until: "\r\n\r\n")
                        status = Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
                    } else {
                        (status, answer) = try await TCPConnection(port: port).request(method, target, token: grant.secret, data: body)
                    }
                    let where_ = probe.unscoped ? "" : inside ? " inside" : " outside"
                    if allowed {
                        #expect((200..<300).contains(status), "\(grant.label): \(probe.name)\(where_) → \(status) \(answer.prefix(300))")
                    } else {
                        #expect(status == 403, "\(grant.label): \(probe.name)\(where_) → \(status) \(answer.prefix(300))")
                        #expect(answer.contains(#""code":"forbidden""#) && answer.contains("needs a"), "\(answer.prefix(300))")
                        #expect(try await owner.status().revision == before, "\(grant.label): \(probe.name)\(where_) changed nothing")
                    }
                }
            }
        }
    }

    /// A reader at /accounts/alice: its explanations leave out the values of the layers above
    /// its scope; its audit log, draft lists, threads and watches hold its scope only.
    @Test func aScopedTokenSeesItsScopeOnly() async throws {
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken")
        let owner = daemon.client
        let reader = try await owner.createToken(named: "alice-reader", role: .reader, scope: Self.tokenScope).secret
        try await Self.waitForListener(port, token: reader)
        try await owner.set("s.k", to: "everyone", scope: "/")
        try await owner.set("s.k", to: "alice", scope: "/accounts/alice")

        let connection = try TCPConnection(port: port)
        let explained = await connection.request("GET", "/v1/prefs/s.k?scope=/accounts/alice/x&explain=1", token: reader)
        #expect(explained.status == 200)
        #expect(explained.body.contains(#"{"layer":"scope:/accounts/alice","revision":"#))
        #expect(explained.body.contains(#"{"layer":"scope:/"}"#), "the layer above is named, its value left out: \(explained.body)")
        #expect(!explained.body.contains("everyone"))
        // What the reader was answered is not kept for others: the owner's explanation is whole.
        let whole = try await daemon.raw("GET", "/v1/prefs/s.k?scope=/accounts/alice/x&explain=1")
        #expect(whole.body.contains("everyone"), "\(whole.body)")
        let above = await connection.request("GET", "/v1/prefs/s.k?scope=/accounts", token: reader)
        #expect(above.status == 403)

        // Watches of every key and of bob's thread, as the reader: changes at bob's scope and
        // bob's drafts never reach them; they end when the token is revoked.
        let (everything, bobsThread) = (try RawSocket(tcpPort: port), try RawSocket(tcpPort: port))
        for (watch, query) in [(everything, ""), (bobsThread, "?thread=bobs")] {
            watch.send("GET /v1/watch\(query) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(reader)\r\n\r\n")
            #expect(await watch.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        }
        try await owner.set("s.k", to: "bob", scope: "/accounts/bob")
        let bobs = try await owner.createDraft(DraftInput(account: "bob", text: "bob's", thread: "bobs"))
        let alices = try await owner.createDraft(DraftInput(account: "alice", text: "alice's", thread: "alices"))
        try await owner.set("s.k", to: "alice again", scope: "/accounts/alice/x")

        // The audit log, draft lists and threads: alice's scope only.
        let log = await connection.request("GET", "/v1/changes", token: reader)
        #expect(log.status == 200 && log.body.contains("alice again") && !log.body.contains(#""bob""#))
        #expect(!log.body.contains("everyone"), "a change at / is outside the reader's scope")
        let drafts = await connection.request("GET", "/v1/drafts", token: reader)
        #expect(drafts.status == 200 && drafts.body.contains(alices.id.uuidString) && !drafts.body.contains(bobs.id.uuidString))
        let thread = await connection.request("GET", "/v1/threads/bobs", token: reader)
        #expect(thread.status == 200 && !thread.body.contains(bobs.id.uuidString))
        #expect(await connection.request("GET", "/v1/drafts?account=bob", token: reader).status == 403)
        #expect(await connection.request("GET", "/v1/drafts/\(bobs.id)", token: reader).status == 403)
        #expect(await connection.request("GET", "/v1/watch?account=bob", token: reader).status == 403)

        let revoked = try await owner.revokeToken(named: "alice-reader")
        let streamed = await everything.readToEnd()
        // (A progress event may come between, when the machine is slow.)
        let changes = { (text: String) in parseEvents(text).map(\.event).filter { $0 != "progress" } }
        #expect(changes(streamed) == ["set", "revoked"], "only alice's value: \(streamed)")
        #expect(!streamed.contains("bob") && streamed.contains("id: \(revoked.revision)"))
        let threadEvents = await bobsThread.readToEnd()
        #expect(changes(threadEvents) == ["revoked"], "nothing of bob's draft: \(threadEvents)")
        await daemon.expectCleanStop()
    }

    /// A creation sent again under the same `Idempotency-Key` (its answer lost) is not answered
    /// again — the secret is stored nowhere — but refused, saying the token was created; nothing
    /// changes.
    @Test func aRepeatedCreationSaysItWasCreated() async throws {
        let daemon = try await Daemon()
        let body = #"{"name":"once","role":"reader"}"#
        let first = try await daemon.raw("POST", "/v1/tokens", body: body, headers: [("Idempotency-Key", "create-once")])
        #expect(first.status == 201 && first.body.contains("prefsd_"))
        let revision = try await daemon.client.status().revision
        let repeated = try await daemon.raw("POST", "/v1/tokens", body: body, headers: [("Idempotency-Key", "create-once")])
        #expect(repeated.status == 409 && repeated.code == "conflict")
        #expect(repeated.body.contains("already created token 'once' at revision \(revision)") && !repeated.body.contains("prefsd_"))
        #expect(try await daemon.client.status().revision == revision)
        await daemon.expectCleanStop()
    }

    /// Tokens live in the database: one created through one host is accepted by the other, and
    /// one revoked on one is refused by the other — on a keep-alive connection already open, and
    /// a running watch ends with a `revoked` event; both survive a restart. On SQLite, the same
    /// through one daemon and its restart.
    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func tokensAreKnownAndRevokedOnEveryHost() async throws {
        try await withPostgresDatabase { database in
            let (first, firstPort) = try await TCPListenerTests.daemon(token: "file-one", postgresURL: database.url)
            let (second, secondPort) = try await TCPListenerTests.daemon(token: "file-two", postgresURL: database.url)
            try await Self.tokensFollowTheDatabase(writer: (first, firstPort), reader: (second, secondPort))
            await first.expectCleanStop()
            await second.expectCleanStop()
        }
    }

    @Test func tokensSurviveARestartAndRevocationIsImmediateOnSQLite() async throws {
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken")
        try await Self.tokensFollowTheDatabase(writer: (daemon, port), reader: (daemon, port))
        await daemon.expectCleanStop()
    }

    /// Creates a token through `writer`'s socket, uses it on `reader`'s listener (a keep-alive
    /// connection, and a watch), restarts `reader`, revokes it through `writer`, and sees it
    /// refused on the open connection and the watch ended.
    static func tokensFollowTheDatabase(writer: (Daemon, UInt16), reader: (Daemon, UInt16)) async throws {
        let created = try await writer.0.client.createToken(named: "shared-writer", role: .writer, scope: "/shared")
        try await Self.waitForListener(reader.1, token: created.secret)
        let connection = try TCPConnection(port: reader.1)
        let written = await connection.request("PUT", "/v1/prefs/h.k?scope=/shared", token: created.secret, body: "1")
        #expect(written.status == 200, "\(written.body)")
        let records = try await writer.0.client.changes(ChangeQuery(prefix: "h.")).changes
        #expect(records.first?.author.name == "token:shared-writer", "a change made with a token is by its name")

        let watch = try RawSocket(tcpPort: reader.1)
        watch.send("GET /v1/watch?prefix=h. HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(created.secret)\r\n\r\n")
        #expect(await watch.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))

        let revoked = try await writer.0.client.revokeToken(named: "shared-writer")
        // The other host takes the revocation in with the change log: at once on SQLite, within
        // a notification's time on PostgreSQL.
        try await waitUntil("the revoked token is refused on the open connection") {
            await connection.request("GET", "/v1/status", token: created.secret).status == 401
        }
        let ended = await watch.readToEnd()
        #expect(parseEvents(ended).last.map { "\($0.id ?? 0) \($0.event)" } == "\(revoked.revision) revoked", "\(ended)")
        #expect(await connection.request("PUT", "/v1/prefs/h.k?scope=/shared", token: created.secret, body: "2").status == 401)
        #expect(try await reader.0.client.resolve("h.k", scope: "/shared").value == 1, "nothing changed")

        // The file token is an admin, and tokens live on across a restart.
        let again = try await writer.0.client.createToken(named: "shared-writer", role: .reader, scope: "/")
        _ = await reader.0.stop()
        try await reader.0.start()
        try await Self.waitForListener(reader.1, token: again.secret)
        #expect(try await reader.0.client.tokens().map(\.name) == ["shared-writer"])
    }

    /// The file token of `--token-file` manages tokens over TCP as an admin at `/`; prefsctl
    /// creates, lists and revokes them; and after all of it no secret is in the daemon's log, a
    /// dump, the audit log, the metrics, `token list` or the database file.
    @Test func theFileTokenStaysAdminAndNoSecretShows() async throws {
        // Logging every request: no secret may be in the log either.
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken", arguments: ["--log-level", "debug"])
        try await Self.waitForListener(port, token: "file-t0ken")
        let connection = try TCPConnection(port: port)
        let made = await connection.request(
            "POST", "/v1/tokens", token: "file-t0ken", body: #"{"name":"ci","role":"writer","scope":"/ci"}"#)
        #expect(made.status == 201)
        let secret = try WireJSON.decoder().decode(CreatedAccessToken.self, from: Data(made.body.utf8)).secret
        #expect(secret.hasPrefix("prefsd_") && secret.count > 40)
        #expect(await connection.request("PUT", "/v1/prefs/c.k?scope=/ci", token: secret, body: "1").status == 200)
        #expect(await connection.request("PUT", "/v1/prefs/c.k?scope=/ci", token: "file-t0ken", body: "2").status == 200)
        #expect(
            await connection.request("POST", "/v1/tokens", token: "file-t0ken", body: #"{"name":"ci","role":"reader"}"#).status
                == 409)
        #expect(await connection.request("POST", "/v1/tokens", token: "file-t0ken", body: #"{"name":"default","role":"reader"}"#).status == 400)

        let created = try await daemon.prefsctl("token", "create", "shell", "--role", "reader", "--scope", "/ci")
        #expect(created.status == 0 && created.stdout.hasPrefix("prefsd_") && created.stderr.contains("reader at /ci"))
        let shellSecret = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await connection.request("GET", "/v1/prefs/c.k?scope=/ci", token: shellSecret).status == 200)
        let list = try await daemon.prefsctl("token", "list")
        #expect(list.status == 0 && list.stdout.contains("ci ") && list.stdout.contains("shell"))
        #expect(try await daemon.prefsctl("token", "create", "shell", "--role", "reader").status == 4, "a name taken is a conflict")
        #expect(try await daemon.prefsctl("token", "create", "bad name", "--role", "reader").status == 2)
        #expect(try await daemon.prefsctl("token", "create", "x", "--role", "owner").status == 2)
        #expect(try await daemon.prefsctl("token", "revoke", "nobody").status == 3)
        #expect(try await daemon.prefsctl("token", "revoke", "shell").status == 0)
        #expect(await connection.request("GET", "/v1/prefs/c.k?scope=/ci", token: shellSecret).status == 401)

        let authors = try await daemon.client.changes(ChangeQuery(prefix: "c.", order: .oldestFirst)).changes.map(\.author.name)
        #expect(authors == ["token:ci", "token:default"])
        let seen = [
            await connection.request("GET", "/v1/dump", token: "file-t0ken").body,
            await connection.request("GET", "/v1/changes?limit=1000", token: "file-t0ken").body,
            await connection.request("GET", "/v1/metrics", token: "file-t0ken").body,
            await connection.request("GET", "/v1/tokens", token: "file-t0ken").body,
            try await daemon.prefsctl("log").stdout, try await daemon.prefsctl("--json", "token", "list").stdout,
        ]
        #expect(seen[2].contains(#"prefsd_token_requests_total{token="ci",outcome="allowed"}"#))
        #expect(seen[2].contains(#"token="none",outcome="unauthorized"}"#))
        await daemon.expectCleanStop()
        let log = (try? String(contentsOf: daemon.folder.appending(path: "prefsd.stderr"), encoding: .utf8)) ?? ""
        let database = try Data(contentsOf: URL(fileURLWithPath: daemon.databasePath))
            + ((try? Data(contentsOf: URL(fileURLWithPath: daemon.databasePath + "-wal"))) ?? Data())
        for secret in [secret, shellSecret] {
            for (index, text) in (seen + [log]).enumerated() { #expect(!text.contains(secret), "a secret in place \(index)") }
            #expect(database.range(of: Data(secret.utf8)) == nil, "a secret in the database file")
            #expect(!seen[1].contains("sha256"), "not even the hash of a secret is in the audit log")
        }
    }
}
