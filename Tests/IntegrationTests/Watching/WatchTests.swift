import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// Watches over the real daemon: precise, ordered, resumable, and never silently lossy.
@Suite struct WatchTests {
    @Test func aKeyWatcherSeesEveryChangeOfItsKeyInOrderAndNothingElse() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        let watcher = Task { try await collect(client.watch(WatchRequest(keys: ["a.key"], since: 0)), count: 50) }
        for index in 0..<50 {
            try await client.set("a.key", to: .integer(Int64(index)))
            try await client.set("b.key", to: .integer(Int64(index)))
        }
        let events = try await watcher.value
        let expectedValues: [JSONValue?] = (0..<50).map { .integer(Int64($0)) }
        let expectedRevisions: [Revision] = (0..<50).map { Int64($0) * 2 + 1 }
        #expect(events.map(\.value) == expectedValues)
        #expect(events.allSatisfy { $0.key == "a.key" })
        #expect(events.map(\.revision) == expectedRevisions)
    }

    @Test func aScopedWatcherIsWokenExactlyWhenTheEffectiveValueChanges() async throws {
        let daemon = try await Daemon()
        let client = daemon.client
        try await client.register(schemas: ["ui.theme": PreferenceSchema(type: .string, defaultValue: "light")])
        let start = try await client.status().revision
        try await client.set("ui.theme", to: "dark", scope: "/accounts/alice")  // 1: effective dark
        try await client.set("ui.theme", to: "blue")  // hidden by alice's own value: no event
        try await client.set("ui.theme", to: "dark", scope: "/accounts")  // hidden: no event
        try await client.set("ui.other", to: 1, scope: "/accounts/alice")  // another key: no event
        try await client.reset("ui.theme", scope: "/accounts/alice", recursive: false)  // 2: back to /accounts' dark — same value: no event
        try await client.reset("ui.theme", scope: "/accounts", recursive: false)  // 3: falls back to / blue
        try await client.lock("ui.theme", scope: "/")  // pins / blue: same value, no event
        try await client.unlock("ui.theme", scope: "/")
        try await client.reset("ui.theme", scope: "/", recursive: false)  // 4: default light
        let events = try await collect(
            client.watch(WatchRequest(keys: ["ui.theme"], scope: "/accounts/alice/threads/1", since: start)), count: 3)
        #expect(events.map(\.value) == ["dark", "blue", "light"])
        #expect(events.map(\.source) == [.scope("/accounts/alice"), .scope("/"), .default])
        #expect(events.allSatisfy { $0.scope == "/accounts/alice/threads/1" })

        // Live, too: only the change at /accounts/alice's chain wakes it. Its `since` is read
        // before the writes (read inside the task, a slow start could put it after them all).
        let now = try await client.status().revision
        let live = Task {
            try await collect(client.watch(WatchRequest(keys: ["ui.theme"], scope: "/accounts/alice", since: now)), count: 1)
        }
        try await client.set("ui.theme", to: "red", scope: "/accounts/bob")
        try await client.set("ui.theme", to: "green", scope: "/accounts/alice/deeper")
        try await client.set("ui.theme", to: "gold", scope: "/accounts")
        let woken = try await live.value
        #expect(woken.map(\.value) == ["gold"])
    }

    @Test func tenThousandConcurrentWritesReachResumingWatchersExactlyOnce() async throws {
        let daemon = try await Daemon(arguments: ["--durability", "normal"])
        let client = daemon.client
        let total = 10_000
        let writers = 8

        // A watcher that reads everything in one go.
        let complete = Task { try await collect(client.watch(WatchRequest(prefixes: ["w."], since: 0)), count: total) }
        // One that stops after 3 000 events and resumes from the last revision it saw.
        let resuming = Task { () -> [ChangeEvent] in
            var first = try await collect(client.watch(WatchRequest(prefixes: ["w."], since: 0)), count: 3000)
            let rest = try await collect(
                client.watch(WatchRequest(prefixes: ["w."], since: first.last!.revision)), count: total - 3000)
            first += rest
            return first
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for index in 0..<(total / writers) {
                        try await client.set("w.k\(index % 50)", to: .string("\(writer)-\(index)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        for events in [try await complete.value, try await resuming.value] {
            #expect(events.count == total)
            #expect(events.map(\.revision) == (1...Int64(total)).map { $0 })
        }
        // Each writer's own changes arrive in the order it made them.
        let values = try await complete.value.compactMap { event -> (Int, Int)? in
            guard case .string(let text)? = event.value else { return nil }
            let parts = text.split(separator: "-").compactMap { Int($0) }
            return (parts[0], parts[1])
        }
        for writer in 0..<writers {
            let own = values.filter { $0.0 == writer }.map(\.1)
            #expect(own == Array(0..<(total / writers)))
        }

        // After a restart, a watcher resuming from revision 6 000 gets exactly the rest.
        await daemon.expectCleanStop()
        try await daemon.start()
        let restarted = daemon.client
        let afterRestart = try await collect(
            restarted.watch(WatchRequest(prefixes: ["w."], since: 6000)), count: total - 6000)
        #expect(afterRestart.map(\.revision) == (6001...Int64(total)).map { $0 })
        let later = Task { try await collect(restarted.watch(WatchRequest(prefixes: ["w."], since: Int64(total))), count: 1) }
        try await restarted.set("w.after", to: 1)
        #expect(try await later.value.map(\.revision) == [Int64(total + 1)])
    }

    @Test func resumingFromACompactedRevisionIsA410NeverASilentGap() async throws {
        let daemon = try await Daemon(arguments: ["--retain-changes", "10"])
        let client = daemon.client
        for index in 0..<30 { try await client.set("c.key", to: .integer(Int64(index))) }

        let raw = try await daemon.raw("GET", "/v1/watch?key=c.key&since=5")
        #expect(raw.status == 410)
        #expect(raw.code == "compacted")
        let body = try JSONDecoder().decode(ErrorBody.self, from: Data(raw.body.utf8))
        #expect(body.error.oldestRevision == 21)

        do {
            _ = try await collect(client.watch(WatchRequest(keys: ["c.key"], since: 5)), count: 1)
            Issue.record("a compacted resume must fail")
        } catch let error as PrefsError {
            #expect(error.code == .compacted)
            #expect(error.oldestRevision == 21)
        }
        // From the oldest kept revision's predecessor, everything is there.
        let kept = try await collect(client.watch(WatchRequest(keys: ["c.key"], since: 20)), count: 10)
        #expect(kept.map(\.revision) == Array(21...30))

        let cli = try await daemon.prefsctl("watch", "c.key", "--since", "3", "--count", "1")
        #expect(cli.status == 1)
        #expect(cli.stderr.contains("compacted"))
    }

    @Test func resumingFromBeforeTheLogReplaysAKeyNoneOfWhoseChangesWereDropped() async throws {
        let daemon = try await Daemon(arguments: ["--retain-changes", "10"])
        let client = daemon.client
        try await client.set("c.kept", to: "first")  // 1: it sets what is stored, the log keeps it
        for index in 0..<29 { try await client.set("c.key", to: .integer(Int64(index))) }
        #expect(try await client.status().oldestRevision == 21)

        let events = client.watch(WatchRequest(keys: ["c.kept"], since: 0))
        let replayed = Task { try await collect(events, count: 2) }
        try await waitUntil("the watch is live") { try await daemon.client.status().counts.watchers == 1 }
        try await client.set("c.kept", to: "second")
        #expect(try await replayed.value.map(\.revision) == [1, 31], "the kept change, then live: c.key's dropped ones are not its")
        #expect(try await daemon.raw("GET", "/v1/watch?key=c.kept&key=c.key&since=0").status == 410)
    }

    /// A resume from before the log waits for the engine's verdict before the answer's head: on
    /// every path, a refusal is a 410 with the oldest revision, and a resume that may go on a 200
    /// with the replay.
    @Test(arguments: HTTPPath.allCases)
    func resumingFromBeforeTheLogIsDecidedBeforeTheHead(path: HTTPPath) async throws {
        let listening = try await ListeningDaemon(arguments: ["--retain-changes", "10"])
        let client = listening.daemon.client
        try await client.set("c.kept", to: "first")  // 1: it sets what is stored, the log keeps it
        for index in 0..<29 { try await client.set("c.key", to: .integer(Int64(index))) }

        let refused = try #require(await listening.exchange("GET /v1/watch?key=c.key&since=0 HTTP/1.1\r\nHost: t\r\n\r\n", on: path))
        #expect(refused.status == 410 && refused.errorCode == "compacted")
        #expect(try JSONDecoder().decode(ErrorBody.self, from: refused.body).error.oldestRevision == 21)

        let connection = try await listening.connect(path)
        connection.send("GET /v1/watch?key=c.kept&since=0 HTTP/1.1\r\nHost: t\r\n\r\n")
        let stream = await connection.read(until: "\"first\"")
        #expect(stream.hasPrefix("HTTP/1.1 200"), "\(stream)")
        #expect(stream.contains("id: 1\n") && stream.contains("event: set\n"), "\(stream)")
    }

    @Test func aSlowWatcherIsEndedWithOverflowWhileAFastOneKeepsUp() async throws {
        // The buffer must hold a whole batch: a batch's events are pushed at once.
        let daemon = try await Daemon(arguments: ["--watch-buffer", "256", "--durability", "normal"])
        let client = daemon.client
        let slow = try RawSocket(path: daemon.socketPath)
        slow.send("GET /v1/watch?prefix=s. HTTP/1.1\r\nHost: prefsd\r\n\r\n")
        // Its head comes once it is subscribed; from then on it reads nothing until the end.
        _ = await slow.read(until: "\r\n\r\n")
        // The fast watcher tells how far it has read, and each batch waits for it to have read the
        // one before: it keeps up however busy the machine is.
        let (read, reading) = AsyncStream.makeStream(of: Int.self)
        let fast = Task {
            var count = 0
            for try await event in client.watch(WatchRequest(prefixes: ["s."], since: 0)) where !event.kind.isNotice {
                count += 1
                if count % 100 == 0 { reading.yield(count) }
                if count == 10_000 { break }
            }
            reading.finish()
            return count
        }
        var fastHasRead = read.makeAsyncIterator()
        for batch in 0..<100 {
            let operations = (0..<100).map { PreferenceOperation.set("s.k\($0)", .integer(Int64(batch))) }
            try await client.apply(PreferenceBatch(operations: operations))
            #expect(await fastHasRead.next() == (batch + 1) * 100)
        }
        #expect(try await fast.value == 10_000)

        let events = parseEvents(await slow.readToEnd())
        let last = try #require(events.last)
        #expect(last.event == "overflow")
        #expect(events.count < 10_000)
        // The overflow carries the revision of the last event delivered before it.
        let delivered = events.dropLast().last
        #expect(last.id == delivered?.id)
        // Resuming from it gets the rest.
        let resumeFrom = try #require(last.id)
        let rest = try await collect(
            client.watch(WatchRequest(prefixes: ["s."], since: resumeFrom)), count: Int(10_000 - resumeFrom))
        #expect(rest.last?.revision == 10_000)
    }

    /// A watch the daemon ends (here with `overflow`) closes its connection: its answer says so
    /// up front (`Connection: close`), so a pooling client never sends the next request on it.
    @Test func aConnectionWhoseWatchEndedIsNotReusedByAPoolingClient() async throws {
        let daemon = try await Daemon(arguments: ["--watch-buffer", "8", "--durability", "normal", "--progress-interval", "0.02"])
        let client = daemon.client
        var overflowed = 0
        for attempt in 0..<200 where overflowed < 20 {
            // New values each time: a batch that changes nothing makes no events.
            let overflowing = PreferenceBatch(
                operations: (0..<16).map { PreferenceOperation.set("o.k\($0)", .integer(Int64(attempt))) })
            var kinds: [ChangeEvent.Kind] = []
            for try await event in client.watch(WatchRequest(prefixes: ["o."])) {
                kinds.append(event.kind)
                // Subscribed, as its first progress event shows: more live changes than it may queue.
                if kinds == [.progress] { try await client.apply(overflowing) }
                // A watcher that drains its queue while the batch is being published need not
                // overflow: this attempt does not count.
                if kinds.count > 40 { break }
            }
            guard kinds.last == .overflow else { continue }
            overflowed += 1
            // At once, on what the pool holds.
            try await client.set("o.after", to: .integer(Int64(attempt)))
        }
        #expect(overflowed == 20)

        // The head of a watch answer, read on a raw socket: it comes once the watch is subscribed.
        let raw = try RawSocket(path: daemon.socketPath)
        raw.send("GET /v1/watch?prefix=o. HTTP/1.1\r\nHost: prefsd\r\n\r\n")
        let head = await raw.read(until: "\r\n\r\n").components(separatedBy: "\r\n\r\n")[0].lowercased()
        #expect(head.hasPrefix("http/1.1 200"))
        #expect(head.contains("connection: close"))
    }

    @Test func quietWatchesGetProgressEventsAndLastEventIDResumes() async throws {
        let daemon = try await Daemon(arguments: ["--progress-interval", "0.2"])
        let client = daemon.client
        try await client.set("p.key", to: 1)
        try await client.set("p.key", to: 2)
        var iterator = client.watch(WatchRequest(keys: ["nothing.here"])).makeAsyncIterator()
        let progress = try await iterator.next()
        #expect(progress?.kind == .progress)
        #expect(progress?.revision == 2)

        let socket = try RawSocket(path: daemon.socketPath)
        socket.send("GET /v1/watch?key=p.key HTTP/1.1\r\nHost: prefsd\r\nLast-Event-ID: 1\r\n\r\n")
        // The change after the Last-Event-ID, then the daemon stops.
        var answer = await socket.read(until: "event: set")
        await daemon.expectCleanStop()
        answer += await socket.readToEnd()
        let events = parseEvents(answer)
        #expect(events.first?.event == "set")
        #expect(events.first?.id == 2)
        #expect(events.last?.event == "shutdown")
    }

    @Test func prefsctlWatchPrintsOneLinePerEventAndStops() async throws {
        let daemon = try await Daemon()
        _ = try await daemon.prefsctl("set", "cli.key", "1")
        _ = try await daemon.prefsctl("set", "cli.other", "x")
        _ = try await daemon.prefsctl("set", "cli.key", "2", "--scope", "/s")
        let json = try await daemon.prefsctl("--json", "watch", "cli.key", "--since", "0", "--count", "2")
        #expect(json.status == 0)
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let events = try lines.map { try JSONDecoder().decode(ChangeEvent.self, from: Data($0.utf8)) }
        #expect(events.map(\.revision) == [1, 3])
        #expect(events[1].scope == "/s")

        let human = try await daemon.prefsctl("watch", "--prefix", "cli.", "--since", "0", "--count", "3")
        #expect(human.stdout.split(separator: "\n") == ["1  set  cli.key  /  1", "2  set  cli.other  /  x", "3  set  cli.key  /s  2"])

        let timedOut = try await daemon.prefsctl("watch", "cli.key", "--timeout", "0.3")
        #expect(timedOut.status == 0)
        #expect(timedOut.stdout.isEmpty)
    }
}
