import Foundation
import PostgresNIO
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Several `prefsd` hosts on one PostgreSQL database: one revision space, and every watcher on
/// every host gets every change it asked for exactly once, in revision order — across concurrent
/// writers on all hosts, a host killed with `kill -9`, a lost listening connection, and a
/// restart of PostgreSQL itself.
@Suite("Several hosts on one PostgreSQL database", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(3)))
struct MultiHostTests {
    /// A write a client saw acknowledged: its revision, and what it set.
    struct Acknowledged: Sendable, Hashable {
        var revision: Revision
        var key: String
        var scope: ScopePath
        var value: String
    }

    static let keys = ["multi.k0", "multi.k1", "multi.k2"]
    static let scopes: [ScopePath] = ["/", "/accounts/a", "/accounts/a/x"]
    /// The scope the scoped watches follow `multi.k0` at.
    static let watchedScope: ScopePath = "/accounts/a"

    /// `count` writes of distinct values through `client`, each to a key and scope in turn;
    /// returns those acknowledged. With `stopAtFailure`, the first failure ends the writes
    /// instead of being thrown.
    static func write(
        _ count: Int, through client: PrefsClient, label: String, stopAtFailure: Bool = false
    ) async throws -> [Acknowledged] {
        var acknowledged: [Acknowledged] = []
        for index in 0..<count {
            let key = keys[index % keys.count]
            let scope = scopes[(index / keys.count) % scopes.count]
            let value = "\(label)-\(index)"
            do {
                let result = try await client.set(key, to: .string(value), scope: scope)
                acknowledged.append(Acknowledged(revision: result.revision, key: key, scope: scope, value: value))
            } catch where stopAtFailure {
                break
            }
        }
        return acknowledged
    }

    /// What a scoped watch of `multi.k0` at ``watchedScope`` must see of `writes` (all the
    /// writes, in revision order): each change of the effective value there.
    static func expectedScoped(_ writes: [Acknowledged]) -> [String] {
        var values: [ScopePath: String] = [:]
        var effective: String?
        var seen: [String] = []
        for write in writes where write.key == "multi.k0" {
            values[write.scope] = write.value
            let now = values[watchedScope] ?? values[.root]
            if now != effective {
                effective = now
                seen.append("\(write.revision) \(now ?? "-")")
            }
        }
        return seen
    }

    /// Starts `count` daemons on `database`.
    static func hosts(_ count: Int, on url: String) async throws -> [Daemon] {
        var hosts: [Daemon] = []
        for _ in 0..<count { hosts.append(try await Daemon(arguments: ["--progress-interval", "0.2"], postgresURL: url)) }
        return hosts
    }

    /// The watches each host keeps open: a key, a prefix, and a scoped watch.
    struct Watches {
        var key: AsyncThrowingStream<ChangeEvent, any Error>
        var prefix: AsyncThrowingStream<ChangeEvent, any Error>
        var scoped: AsyncThrowingStream<ChangeEvent, any Error>

        init(_ client: PrefsClient, since: Revision = 0) {
            key = client.watch(WatchRequest(keys: ["multi.k0"], since: since))
            prefix = client.watch(WatchRequest(prefixes: ["multi."], since: since))
            scoped = client.watch(WatchRequest(keys: ["multi.k0"], scope: MultiHostTests.watchedScope, since: since))
        }

        /// Checks each watch saw exactly what `writes` (every write, in revision order) says.
        func check(against writes: [Acknowledged], host: Int) async throws {
            let last = writes.last!.revision
            let all = try await collect(prefix, through: last)
            #expect(all.map(\.revision) == writes.map(\.revision), "prefix watch on host \(host)")
            #expect(all.map { $0.value?.stringValue } == writes.map(\.value), "prefix watch on host \(host)")
            let k0 = writes.filter { $0.key == "multi.k0" }
            let keyed = try await collect(key, through: k0.last!.revision)
            #expect(keyed.map(\.revision) == k0.map(\.revision), "key watch on host \(host)")
            let expected = MultiHostTests.expectedScoped(writes)
            let scopedRevision = Revision(expected.last!.split(separator: " ")[0])!
            let seen = try await collect(scoped, through: scopedRevision)
            #expect(seen.map { "\($0.revision) \($0.value?.stringValue ?? "-")" } == expected, "scoped watch on host \(host)")
        }
    }

    @Test("Concurrent writers on three hosts: one gap-free revision space; every watcher on every host sees each change once, in order")
    func threeHostsOneRevisionSpace() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(3, on: database.url)
            let watches = hosts.map { Watches($0.client) }
            let acknowledged = try await withThrowingTaskGroup(of: [Acknowledged].self) { group in
                for (index, client) in hosts.map(\.client).enumerated() {
                    for writer in 0..<3 {
                        group.addTask { try await Self.write(60, through: client, label: "h\(index)w\(writer)") }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }.sorted { $0.revision < $1.revision }
            #expect(acknowledged.map(\.revision) == Array(1...Revision(acknowledged.count)), "gap-free, each once")
            for (index, watch) in watches.enumerated() { try await watch.check(against: acknowledged, host: index) }
            for host in hosts { #expect(try await host.client.status().revision == acknowledged.last!.revision) }
            // The hosts' batches ran side by side: some were committed after others' changes,
            // their revisions moved — and every acknowledged revision above is still its own.
            var rebased = 0.0
            for host in hosts { rebased += try await MetricsScrapeTests.scrape(host).value("prefsd_commit_rebases_total") }
            #expect(rebased > 0)
        }
    }

    @Test("Two hosts editing one draft at once: every edit lands, each on the one before — none is lost")
    func concurrentDraftEditsAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let draft = try await hosts[0].client.createDraft(DraftInput(account: "alice", text: "start"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in hosts.map(\.client).enumerated() {
                    group.addTask {
                        for edit in 0..<25 {
                            var patch = DraftPatch()
                            patch.text = .set("h\(index)-\(edit)")
                            _ = try await client.updateDraft(draft.id, patch, ifRevision: nil)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let edited = try await hosts[1].client.draft(draft.id)
            #expect(edited.revision == draft.revision + 50, "each edit raised the revision the one before left")
        }
    }

    @Test("Two hosts racing with the same If-Match: exactly one wins each time, the other gets 412 with the winner's revision")
    func conditionalWritesRaceAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let clients = hosts.map(\.client)
            for round in 0..<20 {
                let base = try await clients[0].set("multi.k0", to: .string("base-\(round)"), scope: "/accounts/a")
                // Every other round the second host may not have taken the base in yet: the check
                // is made in the write's transaction, after the database's newest changes.
                if round.isMultiple(of: 2) { try await clients[1].waitForRevision(base.revision) }
                let outcomes = try await withThrowingTaskGroup(of: Result<WriteResult, PrefsError>.self) { group in
                    for (index, client) in clients.enumerated() {
                        group.addTask {
                            do {
                                return .success(
                                    try await client.set(
                                        "multi.k0", to: .string("h\(index)-\(round)"), scope: "/accounts/a", ifRevision: base.revision))
                            } catch let error as PrefsError {
                                return .failure(error)
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let won = outcomes.compactMap { try? $0.get() }
                let lost = outcomes.compactMap { outcome -> PrefsError? in
                    if case .failure(let error) = outcome { return error }
                    return nil
                }
                #expect(won.count == 1 && lost.count == 1, "round \(round): \(outcomes)")
                #expect(lost.first?.code == .staleRevision, "round \(round)")
                #expect(lost.first?.currentPreference?.revision == won.first?.revision, "round \(round): the winner's revision")
                #expect(won.first?.revision == base.revision + 1, "round \(round): one change, no other")
            }
        }
    }

    @Test("A watcher that moves to another host with since= misses nothing and sees nothing twice")
    func aWatcherMovesHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let first = try await Self.write(30, through: hosts[0].client, label: "before")
            let seenOnA = try await collect(hosts[0].client.watch(WatchRequest(prefixes: ["multi."], since: 0)), through: 20)
            let more = try await Self.write(30, through: hosts[0].client, label: "after")
            let seenOnB = try await collect(
                hosts[1].client.watch(WatchRequest(prefixes: ["multi."], since: seenOnA.last!.revision)), through: more.last!.revision)
            #expect((seenOnA + seenOnB).map(\.revision) == (first + more).map(\.revision))
        }
    }

    @Test("minRevision reads another host's write: at once when taken in, else after waiting; one beyond the database's newest is 400 at once")
    func minRevisionReadsYourWritesAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let (writer, reader) = (hosts[0].client, hosts[1].client)
            for round in 0..<50 {
                let written = try await writer.set("multi.k0", to: .integer(Int64(round)), scope: "/accounts/a")
                // The HTTP form, straight after the write on the other host.
                let raw = try await hosts[1].raw("GET", "/v1/prefs/multi.k0?scope=/accounts/a&minRevision=\(written.revision)")
                #expect(raw.status == 200)
                #expect(raw.body.contains(#""value":\#(round)"#), "round \(round): \(raw.body)")
                // The Swift form.
                try await reader.waitForRevision(written.revision)
                #expect(try await reader.resolve("multi.k0", scope: "/accounts/a").value == .integer(Int64(round)))
            }
            // A revision the database has not assigned will never come: refused at once, naming
            // the newest — not `behind`, which says it is on its way.
            let newest = try await reader.status().revision
            let ahead = await #expect(throws: PrefsError.self) { try await reader.waitForRevision(newest + 1000) }
            #expect(ahead?.code == .invalidRequest)
            #expect(ahead?.newestRevision == newest)
            let raw = try await hosts[1].raw("GET", "/v1/prefs/multi.k0?minRevision=\(newest + 1000)")
            #expect(raw.status == 400)
            #expect(raw.code == "invalid_request")
            let huge = try await hosts[1].raw("GET", "/v1/status?minRevision=9223372036854775806")
            #expect(huge.status == 400)
        }
    }

    @Test("Two hosts compact one change log: it keeps the newest changes, none missing; since= before them is 410 compacted on either host")
    func compactionAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = [
                try await Daemon(arguments: ["--retain-changes", "64"], postgresURL: database.url),
                try await Daemon(arguments: ["--retain-changes", "64"], postgresURL: database.url),
            ]
            let (clientA, clientB) = (hosts[0].client, hosts[1].client)
            async let first = Self.write(150, through: clientA, label: "a")
            async let second = Self.write(150, through: clientB, label: "b")
            let writes = try await (first + second).sorted { $0.revision < $1.revision }
            #expect(writes.map(\.revision) == Array(1...300))
            for host in hosts { try await host.client.waitForRevision(300) }

            let (logged, oldest) = try await database.connection { connection, logger in
                var logged: [Int64] = []
                for try await revision in try await connection.query("SELECT revision FROM change ORDER BY revision", logger: logger)
                    .decode(Int64.self)
                {
                    logged.append(revision)
                }
                var oldest: Int64 = 0
                for try await value in try await connection.query(
                    "SELECT oldest_revision FROM change_log_state WHERE id = 1", logger: logger
                ).decode(Int64.self) {
                    oldest = value
                }
                return (logged, oldest)
            }
            #expect(logged == Array(oldest...300), "the log holds every revision from its oldest on, and nothing older")
            #expect((64...66).contains(logged.count), "compacted in steps of 64 / 32: \(logged.count) kept")
            for host in hosts {
                #expect(try await host.client.status().oldestRevision == oldest)
                let raw = try await host.raw("GET", "/v1/watch?since=1")
                #expect(raw.status == 410 && raw.code == "compacted", "\(raw)")
            }
            let seen = try await collect(
                hosts[1].client.watch(WatchRequest(prefixes: ["multi."], since: oldest - 1)), through: 300)
            #expect(seen.map(\.revision) == Array(oldest...300))
        }
    }

    @Test("A compose preference set on one host re-validates a draft made on another: that host's watchers get the validation event, and both hosts judge the draft alike")
    func draftsAreRevalidatedAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let (setter, keeper) = (hosts[0].client, hosts[1].client)
            let draft = try await keeper.createDraft(DraftInput(account: "alice", text: String(repeating: "x", count: 30)))
            #expect(try await keeper.validation(of: draft.id).problems.isEmpty)
            var events = keeper.watch(WatchRequest(since: try await keeper.status().revision, account: "alice")).makeAsyncIterator()

            let changed = try await setter.set(ComposeRules.maxCharactersKey, to: 10, scope: "/accounts/alice")
            var validation: ChangeEvent?
            while validation == nil, let event = try await events.next() {
                if event.kind == .validation { validation = event }
            }
            #expect(validation?.draft == draft.id.uuidString && validation?.valid == false, "\(String(describing: validation))")
            #expect(validation.map { $0.revision >= changed.revision } == true)
            try await keeper.waitForRevision(changed.revision)
            let judged = try await keeper.validation(of: draft.id)
            #expect(Set(judged.problems.map(\.code)) == ["too_long"])
            #expect(try await setter.validation(of: draft.id) == judged)
        }
    }

    @Test("Drafts made on one host while another keeps changing the compose rules: the last event on each draft gives the validity its final rules give")
    func draftValidityRacesRulesAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let (setter, maker) = (hosts[0].client, hosts[1].client)
            async let made = {
                var drafts: [Draft] = []
                for index in 0..<30 {
                    drafts.append(try await maker.createDraft(DraftInput(account: "alice", text: String(repeating: "x", count: 20 + index))))
                }
                return drafts
            }()
            async let ruled: Void = {
                for round in 0..<15 {
                    try await setter.set(ComposeRules.maxCharactersKey, to: .integer(round.isMultiple(of: 2) ? 35 : 500), scope: "/accounts/alice")
                }
            }()
            let (drafts, _) = try await (made, ruled)
            // A draft event after everything, on the host that made the drafts: where its watch ends.
            _ = try await maker.createDraft(DraftInput(account: "alice", text: "end"))
            let last = try await maker.status().revision

            var validity: [String: Bool] = [:]
            for try await event in maker.watch(WatchRequest(since: 0, account: "alice")) where !event.kind.isNotice {
                if let draft = event.draft, let valid = event.valid { validity[draft] = valid }
                if event.revision >= last { break }
            }
            var invalid = 0
            for draft in drafts {
                let judged = try await maker.validation(of: draft.id)
                #expect(validity[draft.id.uuidString] == judged.valid, "a draft of \(draft.text.count) characters")
                if !judged.valid { invalid += 1 }
            }
            #expect(invalid == 14, "the last rule allows 35 characters: the 14 drafts of 36 to 49 are too long")
        }
    }

    @Test("The same attachment uploaded through two hosts at once is stored once, read back whole through either, and freed with its last reference")
    func attachmentsAreSharedAcrossHosts() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let clients = hosts.map(\.client)
            let bytes = Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let added = try await withThrowingTaskGroup(of: AttachmentResult.self) { group in
                for client in clients {
                    group.addTask {
                        let draft = try await client.createDraft(DraftInput(account: "alice", text: "with data"))
                        let stream = AsyncThrowingStream<Data, any Error> { continuation in
                            continuation.yield(bytes.prefix(200_000))
                            continuation.yield(bytes.dropFirst(200_000))
                            continuation.finish()
                        }
                        return try await client.addAttachment(
                            to: draft.id, AttachmentUpload(filename: "data.bin"), ifRevision: nil, bytes: stream)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(added.map(\.attachment.sha256)).count == 1)
            #expect(try await Self.blobCount(database) == 1, "stored once")
            // Each read back through the host that did not store it.
            for (result, client) in zip(added, clients.reversed()) {
                var read = Data()
                for try await chunk in try await client.attachmentData(result.attachment.id, of: result.draft.id).bytes {
                    read.append(chunk)
                }
                #expect(read == bytes)
            }
            _ = try await clients[1].deleteDraft(added[0].draft.id, ifRevision: nil)
            #expect(try await Self.blobCount(database) == 1, "still referenced")
            _ = try await clients[0].deleteDraft(added[1].draft.id, ifRevision: nil)
            #expect(try await Self.blobCount(database) == 0, "freed with its last reference")
        }
    }

    /// How many blobs the database stores.
    static func blobCount(_ database: PostgresTestDatabase) async throws -> Int64 {
        try await database.connection { connection, logger in
            var count: Int64 = -1
            for try await value in try await connection.query("SELECT count(*) FROM blob", logger: logger).decode(Int64.self) {
                count = value
            }
            return count
        }
    }

    @Test("kill -9 of a host while it writes: every write it acknowledged is in the database, and the others go on")
    func aHostKilledLosesNothingAcknowledged() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let doomed = hosts[0].client
            let writing = Task { try await Self.write(400, through: doomed, label: "doomed", stopAtFailure: true) }
            // Killed midway: once the other host has seen 20 of its writes.
            try await waitUntil("the other host has seen 20 writes", interval: .milliseconds(5)) {
                try await hosts[1].client.status().revision >= 20
            }
            await hosts[0].kill()
            let acknowledged = try await writing.value
            #expect(!acknowledged.isEmpty)
            let survivors = try await Self.write(10, through: hosts[1].client, label: "survivor")
            let stored = try await database.connection { connection, logger in
                var values: [Revision: String] = [:]
                let rows = try await connection.query("SELECT revision, value FROM change", logger: logger)
                for try await (revision, value) in rows.decode((Int64, String).self) { values[revision] = value }
                return values
            }
            for write in acknowledged + survivors {
                #expect(stored[write.revision] == JSONValue.string(write.value).canonicalText, "revision \(write.revision)")
            }
            #expect(stored.keys.sorted() == Array(1...Revision(stored.count)), "gap-free")
        }
    }

    @Test("A host whose listening connection is cut misses nothing: its watchers catch up")
    func aListenerCutIsCaughtUp() async throws {
        try await withPostgresDatabase { database in
            let hosts = try await Self.hosts(2, on: database.url)
            let watches = Watches(hosts[1].client)
            var acknowledged = try await Self.write(20, through: hosts[0].client, label: "one")
            try await database.connection { connection, logger in
                _ = try await connection.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'prefsd listener' AND datname = current_database()
                    """, logger: logger)
            }
            acknowledged += try await Self.write(20, through: hosts[0].client, label: "two")
            try await watches.check(against: acknowledged, host: 1)
        }
    }

    @Test("PostgreSQL goes away mid-run: writes answer 503 unavailable, reads come from memory, watches stay open; when it is back every host catches up with nothing missed")
    func postgresRestartsMidRun() async throws {
        try await withOwnPostgresServer { server in
            let database = try await PostgresTestDatabase.create(on: server.url)
            let hosts = try await Self.hosts(2, on: database.url)
            let watches = Watches(hosts[1].client)
            var acknowledged = try await Self.write(15, through: hosts[0].client, label: "before")

            try await server.pause()
            let refused = await #expect(throws: PrefsError.self) {
                try await hosts[0].client.set("multi.k0", to: "while away", scope: "/")
            }
            #expect(refused?.code == .unavailable)
            // A revision this host has not taken in, and cannot ask the database about now, is
            // `behind` once the wait is over, naming the revision the host has.
            let applied = try await hosts[1].client.status().revision
            let behind = await #expect(throws: PrefsError.self) { try await hosts[1].client.waitForRevision(applied + 1) }
            #expect(behind?.code == .behind)
            #expect(behind?.appliedRevision == applied)
            let cached = try await hosts[1].client.resolve("multi.k0", scope: "/")
            #expect(cached.value == .string(acknowledged.last { $0.key == "multi.k0" && $0.scope == .root }!.value))

            try await server.resume()
            // The first writes after the restart may still meet a connection the server dropped;
            // some must go through.
            var attempt = 0
            try await waitUntil("writes go through after the restart", timeout: .seconds(10), interval: .milliseconds(100)) {
                attempt += 1
                guard let more = try? await Self.write(15, through: hosts[0].client, label: "after\(attempt)") else { return false }
                acknowledged += more
                return true
            }
            acknowledged += try await Self.write(15, through: hosts[1].client, label: "other")
            try await watches.check(against: acknowledged.sorted { $0.revision < $1.revision }, host: 1)
        }
    }

    @Test("PostgreSQL unreachable at start: a clear message and exit 1")
    func unreachableAtStart() async throws {
        let port = try await CommandResult.runTool(
            "/usr/bin/env", ["python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        let url = "postgresql://prefs:secret@127.0.0.1:\(port.stdout.trimmingCharacters(in: .whitespacesAndNewlines))/prefs"
        let folder = FileManager.default.temporaryDirectory.appending(path: "prefsd-unreachable-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await CommandResult.run("prefsd", ["--postgres", url, "--socket", folder.appending(path: "s.sock").path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("unreachable") && result.stderr.contains("postgresql://prefs@127.0.0.1"))
        #expect(!result.stderr.contains("secret"), "the password is never logged")
    }
}

extension JSONValue {
    /// The string, if this is one.
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
