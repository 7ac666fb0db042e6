import Foundation
import PrefsClient
import PrefsEngine
import PrefsKit
import PrefsPostgres
import PrefsStore
import TestHarness
import Testing

/// Who changed what and when, and putting it back — the same on an embedded store, a daemon on
/// SQLite, a PostgreSQL store and a daemon on PostgreSQL: authors and reasons on every path, the
/// history of an effective value through writes above it, locks and schemas, the audit log's
/// filters and pages, reads in the past and diffs, reverts, and how long the log lasts.
@Suite("History, audit log, reads in the past, revert", .timeLimit(.minutes(3)))
struct HistoryTests {
    /// The scope whose effective value the scenario follows.
    static let deep: ScopePath = "/accounts/alice/threads/42"

    /// Writes through `service` — at the followed scope's ancestors, locks, schemas — and checks
    /// what history, the audit log, reads in the past, diff and revert answer; returns the
    /// history's steps as text, to compare between backends.
    static func scenario(_ service: any PrefsService) async throws -> [String] {
        let base = try await service.status().revision
        try await service.register(schemas: ["h.size": PreferenceSchema(type: .int, defaultValue: 3, minimum: 1, maximum: 99)])
        try await service.set("h.size", to: 5, scope: "/accounts/alice", reason: "alice likes it big")  // base+2
        try await service.set("h.size", to: 7)  // base+3: shadowed at the deep scope — no step
        try await service.lock("h.size", scope: "/accounts")  // base+4: pins / 's 7
        try await service.set("h.other", to: 1, scope: "/accounts/alice")  // base+5: another key
        try await service.unlock("h.size", scope: "/accounts")  // base+6: back to alice's 5
        try await service.reset("h.size", scope: "/accounts/alice", recursive: false)  // base+7: / 's 7
        try await service.reset("h.size", scope: .root, recursive: false)  // base+8: the default, 3
        try await service.register(schemas: ["h.size": PreferenceSchema(type: .int, defaultValue: 4, minimum: 1, maximum: 99)])  // base+9

        let history = try await service.history(of: "h.size", scope: deep, limit: 20)
        let steps = history.steps.map { step in
            "\(step.change.revision - base) \(step.change.kind) \(step.change.scope?.path ?? "-") → \(step.value.canonicalText) \(step.source)"
                + " (was \(step.previousValue?.canonicalText ?? "?") \(step.previousSource?.description ?? "?"))"
        }
        #expect(
            steps == [
                "9 schema - → 4 default (was 3 default)",
                "8 reset / → 3 default (was 7 scope:/)",
                "7 reset /accounts/alice → 7 scope:/ (was 5 scope:/accounts/alice)",
                "6 unlock /accounts → 5 scope:/accounts/alice (was 7 lock:/accounts)",
                "4 lock /accounts → 7 lock:/accounts (was 5 scope:/accounts/alice)",
                "2 set /accounts/alice → 5 scope:/accounts/alice (was 3 default)",
                "1 schema - → 3 default (was ? none)",
            ])
        #expect(history.steps.first { $0.change.revision == base + 2 }?.change.reason == "alice likes it big")
        #expect(history.current.value == 4 && history.current.source == .default)
        // Paged: two steps at a time, then from where the page ended.
        let first = try await service.history(of: KeyName("h.size"), scope: deep, limit: 2, before: nil)
        let second = try await service.history(of: KeyName("h.size"), scope: deep, limit: 2, before: first.next)
        #expect(first.steps.map(\.change.revision) == [base + 9, base + 8] && first.next == base + 8)
        #expect(second.steps.map(\.change.revision) == [base + 7, base + 6])

        // Reads in the past.
        let then = try await service.resolve(KeyName("h.size"), scope: deep, explain: true, atRevision: base + 4)
        #expect(then.value == 7 && then.source == .lock("/accounts") && then.revision == base + 4)
        let listed = try await service.list(scope: "/accounts/alice", prefix: "h.", atRevision: base + 5)
        #expect(listed.map { "\($0.key)=\($0.value.canonicalText)" } == ["h.other=1", "h.size=7"])
        let dumped = try await service.dump(scope: .root, atRevision: base + 2)
        #expect(dumped.values.map { "\($0.key)@\($0.scope.path)=\($0.value.canonicalText)" } == ["h.size@/accounts/alice=5"])
        #expect(dumped.schemas["h.size"]?.defaultValue == 3)
        await #expect(throws: PrefsError.self) { try await service.resolve(KeyName("h.size"), scope: .root, explain: false, atRevision: base + 1000) }

        // A diff: what differs at the deep scope between the lock and now, and who did it.
        let diff = try await service.diff(from: base + 4, to: nil, scope: deep, prefix: "h.")
        #expect(diff.differences.map { "\($0.key) \($0.before.value.canonicalText)→\($0.after.value.canonicalText) by \($0.change?.revision ?? 0)" }
            == ["h.other null→1 by \(base + 5)", "h.size 7→4 by \(base + 9)"])

        // The audit log: filters and pages.
        let all = try await service.changes(ChangeQuery(prefix: "h.", since: .revision(base)))
        #expect(all.changes.map(\.revision) == Array((base + 1...base + 9).reversed()))
        let byScope = try await service.changes(ChangeQuery(prefix: "h.", scope: "/accounts", since: .revision(base), order: .oldestFirst))
        #expect(byScope.changes.map(\.revision) == [base + 2, base + 4, base + 5, base + 6, base + 7])
        var paged: [Revision] = []
        var query: ChangeQuery? = ChangeQuery(prefix: "h.size", since: .revision(base), limit: 3)
        while let next = query {
            let page = try await service.changes(next)
            paged += page.changes.map(\.revision)
            query = page.next
        }
        #expect(paged == [9, 8, 7, 6, 4, 3, 2, 1].map { base + $0 })
        let timed = try await service.changes(ChangeQuery(prefix: "h.", since: .time(all.changes.last!.time), until: .time(Date())))
        #expect(timed.changes.count == 9)

        // Revert: a stale If-Match changes nothing; the current one puts alice's 5 back, with a
        // reason that says so, and history shows both.
        await #expect(throws: PrefsError.self) {
            try await service.revert(.key(KeyName("h.size")), scope: "/accounts/alice", to: base + 2, ifRevision: base + 2)
        }
        let reverted = try await service.withReason("undo the reset") {
            try await service.revert(.key(KeyName("h.size")), scope: "/accounts/alice", to: base + 2, ifRevision: 0)
        }
        #expect(try await service.resolve("h.size", scope: deep).value == 5)
        let revert = try await service.changes(ChangeQuery(since: .revision(reverted.revision - 1))).changes.first
        #expect(revert?.reason == "undo the reset (revert of 'h.size' at /accounts/alice to revision \(base + 2))")
        // A prefix: everything under h. at /accounts/alice as it was before any of it.
        try await service.revert(.prefix("h."), scope: "/accounts/alice", to: base, ifRevision: nil)
        #expect(try await service.list(scope: "/accounts/alice", prefix: "h.").map(\.key) == ["h.size"])
        #expect(try await service.resolve("h.size", scope: deep).source == .default)
        return steps
    }

    @Test func onAnEmbeddedStore() async throws {
        try await withStore(EmbeddedStore.temporary()) { store in _ = try await Self.scenario(store) }
    }

    @Test func throughADaemonOnSQLite() async throws {
        let daemon = try await Daemon()
        _ = try await Self.scenario(daemon.client)
        await daemon.expectCleanStop()
    }

    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func onAPostgresStoreAndThroughADaemonOnPostgres() async throws {
        try await withPostgresDatabase { database in
            try await withStore(PostgresStore(url: database.url)) { store in _ = try await Self.scenario(store) }
        }
        try await Daemon.onPostgres { daemon in _ = try await Self.scenario(daemon.client) }
    }

    /// Every path records its author: a library store its configured one (by default this
    /// process), the socket the daemon's user with the client's program and User-Agent,
    /// prefsctl its own, the TCP listener the token; PostgreSQL also the host.
    @Test func everyPathRecordsItsAuthorAndReason() async throws {
        let me = ChangeAuthor.currentProcess
        var configuration = StoreConfiguration()
        configuration.author = ChangeAuthor(name: "deploy-bot", agent: "rollout/2")
        try await withStore(EmbeddedStore.temporary(configuration: configuration)) { store in
            try await store.set("a.k", to: 1, reason: "first")
            let record = try await store.changes(ChangeQuery()).changes.first
            #expect(record?.author == ChangeAuthor(name: "deploy-bot", agent: "rollout/2") && record?.reason == "first")
        }
        try await withStore(EmbeddedStore.temporary()) { store in
            try await store.set("a.k", to: 1)
            #expect(try await store.changes(ChangeQuery()).changes.first?.author == me)
        }

        let (daemon, port) = try await TCPListenerTests.daemon(token: "t0ken")
        let app = PrefsClient(socketPath: daemon.socketPath, userAgent: "ComposeApp/3.1")
        try await app.set("a.k", to: 1, reason: "from the app")
        #expect(try await daemon.prefsctl("set", "a.k", "2", "--reason", "from the shell, ünïcode").status == 0)
        try await waitUntil("the TCP listener answers") {
            let socket = try? RawSocket(tcpPort: port)
            guard let socket else { return false }
            socket.send(
                "PUT /v1/prefs/a.k HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer t0ken\r\n"
                    + "User-Agent: curl/8\r\nPrefs-Reason: over%20TCP\r\nContent-Length: 1\r\n\r\n3")
            return await socket.readToEnd().hasPrefix("HTTP/1.1 200")
        }
        let records = try await app.changes(ChangeQuery(order: .oldestFirst)).changes
        #expect(records.map(\.author.name) == [me.name, me.name, "token:default"])
        #expect(records[0].author.agent?.hasPrefix("ComposeApp/3.1 (") == true)
        #expect(records[0].author.agent?.hasSuffix("[\(getpid())])") == true)
        #expect(records[1].author.agent?.hasPrefix("prefsctl/\(prefsVersion) (prefsctl[") == true)
        #expect(records[2].author.agent == "curl/8")
        #expect(records.map(\.reason) == ["from the app", "from the shell, ünïcode", "over TCP"])
        #expect(records.allSatisfy { $0.author.host == nil }, "one host on SQLite: no host recorded")
        // A reason that breaks the rules is refused, and changes nothing.
        let tooLong = try await daemon.raw("PUT", "/v1/prefs/a.k", body: "4", headers: [("Prefs-Reason", String(repeating: "x", count: 501))])
        #expect(tooLong.status == 400 && tooLong.code == "invalid_request")
        #expect(try await daemon.prefsctl("set", "a.k", "4", "--reason", "").status == 2)
        #expect(try await app.resolve("a.k").value == 3)
        await daemon.expectCleanStop()
    }

    /// Two hosts on one PostgreSQL database: each change records the host that committed it,
    /// and either host answers the other's history.
    @Test(.enabled(if: PostgresTestDatabase.isEnabled))
    func twoHostsRecordTheirHostAndShareHistory() async throws {
        try await withPostgresDatabase { database in
            var one = StoreConfiguration()
            one.author = ChangeAuthor(name: "host-one-app")
            var two = StoreConfiguration()
            two.author = ChangeAuthor(name: "host-two-app")
            try await withStore(PostgresStore(url: database.url, configuration: one)) { first in
                try await withStore(PostgresStore(url: database.url, configuration: two)) { second in
                    let written = try await first.set("m.k", to: 1, reason: "one")
                    let rewritten = try await second.set("m.k", to: 2, scope: "/a", reason: "two")
                    try await first.waitForRevision(rewritten.revision)
                    let history = try await first.history(of: "m.k", scope: "/a/b")
                    #expect(history.steps.map(\.change.revision) == [rewritten.revision, written.revision])
                    #expect(history.steps.map(\.change.author.name) == ["host-two-app", "host-one-app"])
                    #expect(history.steps.allSatisfy { $0.change.author.host == ProcessInfo.processInfo.hostName })
                    let past = try await second.resolve(KeyName("m.k"), scope: "/a/b", explain: false, atRevision: written.revision)
                    #expect(past.value == 1)
                }
            }
        }
    }

    /// The log keeps `--retain-changes` changes and those younger than `--retain-for`; older
    /// ones go — but never one that set what is stored now, so current state stays explained.
    /// Reads before the log are `compacted`, with the oldest revision it holds.
    @Test func retentionKeepsTheCurrentStateExplained() async throws {
        var configuration = StoreConfiguration()
        configuration.retainChanges = 64
        try await withStore(EmbeddedStore.temporary(configuration: configuration)) { store in
            let old = try await store.set("r.kept", to: "set long ago", reason: "the beginning")
            for index in 1...200 { try await store.set("r.busy", to: .integer(Int64(index))) }
            let status = try await store.status()
            #expect(status.oldestRevision > old.revision + 100)
            let history = try await store.history(of: "r.kept", scope: "/accounts/x")
            #expect(history.steps.map(\.change.revision) == [old.revision])
            #expect(history.steps.first?.change.reason == "the beginning" && history.steps.first?.previousValue == nil)
            do {
                _ = try await store.resolve(KeyName("r.busy"), scope: .root, explain: false, atRevision: old.revision)
                Issue.record("a read before the log was answered")
            } catch let error as PrefsError {
                #expect(error.code == .compacted && error.oldestRevision == status.oldestRevision)
            }
            let log = try await store.changes(ChangeQuery(limit: 1000, order: .oldestFirst)).changes
            #expect(log.first?.revision == old.revision, "the change that set r.kept stays")
            #expect(log.dropFirst().first?.revision ?? 0 >= status.oldestRevision - 1, "the others before the log went")
        }
        // With --retain-for, nothing younger goes, however many changes there are.
        configuration.retainFor = .seconds(3600)
        try await withStore(EmbeddedStore.temporary(configuration: configuration)) { store in
            for index in 1...200 { try await store.set("r.busy", to: .integer(Int64(index))) }
            #expect(try await store.status().oldestRevision == 1)
            #expect(try await store.resolve(KeyName("r.busy"), scope: .root, explain: false, atRevision: 1).value == 1)
        }
    }

    /// Over HTTP: a read before the log is 410 with the oldest revision kept; a diff backwards
    /// and a revert naming both a key and a prefix are 400; drafts' changes are in the audit log
    /// with their draft and account, never their text.
    @Test func theAPIsAnswersAndRefusals() async throws {
        let daemon = try await Daemon(arguments: ["--retain-changes", "2"])
        for value in 1...10 { try await daemon.client.set("p.k", to: .integer(Int64(value))) }
        let gone = try await daemon.raw("GET", "/v1/prefs/p.k?atRevision=1")
        #expect(gone.status == 410 && gone.code == "compacted" && gone.body.contains(#""oldestRevision":"#))
        #expect(try await daemon.prefsctl("get", "p.k", "--at", "1").stderr.contains("compacted"))
        #expect(try await daemon.raw("GET", "/v1/diff?from=9&to=8").status == 400)
        #expect(try await daemon.raw("GET", "/v1/diff").status == 400)
        let both = try await daemon.raw("POST", "/v1/prefs:revert", body: #"{"key":"p.k","prefix":"p.","scope":"/","toRevision":9}"#)
        #expect(both.status == 400)
        #expect(try await daemon.raw("GET", "/v1/changes?since=yesterday").status == 400)
        #expect(try await daemon.raw("GET", "/v1/changes?format=xml").status == 400)
        let draft = try await daemon.client.createDraft(DraftInput(account: "alice", text: "a secret draft text"))
        let page = try await daemon.raw("GET", "/v1/changes?limit=1&format=jsonl")
        #expect(page.status == 200 && page.body.contains(draft.id.uuidString) && page.body.contains(#""account":"alice""#))
        #expect(!page.body.contains("secret"))
        let csv = try await daemon.raw("GET", "/v1/changes?limit=2&format=csv")
        #expect(csv.body.hasPrefix(ChangeRecord.csvHeader + "\r\n") && csv.body.split(separator: "\r\n").count == 3)
        await daemon.expectCleanStop()
    }

    /// prefsctl's verbs: history, log (with its exports), get --at, diff and revert, with
    /// their exit statuses.
    @Test func prefsctlVerbs() async throws {
        let daemon = try await Daemon()
        for arguments in [
            ["set", "c.theme", "dark", "--reason", "brand"], ["set", "c.theme", "light", "--scope", "/accounts/alice"],
            ["lock", "c.theme", "--scope", "/accounts"], ["set", "c.theme", "blue"],
        ] {
            #expect(try await daemon.prefsctl(arguments).status == 0)
        }
        let history = try await daemon.prefsctl("history", "c.theme", "--scope", "/accounts/alice/threads/1")
        #expect(history.status == 0)
        #expect(history.stdout.contains("blue") && history.stdout.contains("lock:/accounts"))
        #expect(history.stdout.contains("brand"))
        let csv = try await daemon.prefsctl("log", "--csv", "--oldest-first").stdout.split(separator: "\r\n").map(String.init)
        #expect(csv.first == ChangeRecord.csvHeader)
        #expect(csv.count == 5 && csv[1].hasPrefix("1,") && csv[1].hasSuffix(",brand"))
        let jsonl = try await daemon.prefsctl("log", "--jsonl", "--author", ChangeAuthor.currentProcess.name).stdout
        #expect(jsonl.split(separator: "\n").count == 4)
        #expect(try await daemon.prefsctl("log", "--author", "nobody", "--json").stdout.filter { !$0.isWhitespace } == "[]")
        #expect(try await daemon.prefsctl("log", "--author", "nobody").stdout == "no change in the log matches\n")
        #expect(try await daemon.prefsctl("get", "c.theme", "--at", "1").stdout == "dark\n")
        #expect(try await daemon.prefsctl("get", "c.theme", "--at", "1h").status == 3, "an hour ago nothing was set")
        let diff = try await daemon.prefsctl("diff", "1", "--scope", "/accounts/alice")
        #expect(diff.stdout.contains("c.theme") && diff.stdout.contains("dark"))
        let stale = try await daemon.prefsctl("revert", "c.theme", "--scope", "/", "--to", "1", "--if-revision", "1")
        #expect(stale.status == 4)
        let revert = try await daemon.prefsctl("revert", "c.theme", "--scope", "/", "--to", "1", "--if-revision", "4")
        #expect(revert.status == 0 && revert.stdout.contains("now at revision 5"))
        #expect(try await daemon.prefsctl("get", "c.theme").stdout == "dark\n")
        #expect(try await daemon.prefsctl("revert", "--scope", "/", "--to", "1").status == 2, "neither a key nor a prefix")
        #expect(try await daemon.prefsctl("log", "--since", "yesterday").status == 2)
        await daemon.expectCleanStop()
    }
}
