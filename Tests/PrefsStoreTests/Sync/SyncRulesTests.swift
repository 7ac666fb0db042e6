import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import Testing

/// Sync's rules, each on a small scene: an upstream and two replicas in one process, exchanging
/// directly (``SyncBench``).
@Suite("Sync rules")
struct SyncRulesTests {
    static let alice: ScopePath = "/accounts/alice"

    func schema(_ text: String) throws -> PreferenceSchema {
        try JSONDecoder().decode(PreferenceSchema.self, from: Data(text.utf8))
    }

    @Test("a change on one replica reaches the other, and its watchers are told")
    func changeTravels() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        try await bench.syncAll()
        var events = desktop.watch(WatchRequest(keys: ["timeline.fontSize"], scope: Self.alice)).makeAsyncIterator()
        try await laptop.set("timeline.fontSize", to: 15, scope: Self.alice, reason: "bigger")
        try await bench.sync("laptop")
        try await bench.sync("desktop")
        #expect(try await desktop.resolve("timeline.fontSize", scope: Self.alice).value == 15)
        #expect(try await bench.upstream.resolve("timeline.fontSize", scope: Self.alice).value == 15)
        let event = try await events.next()
        #expect(event?.kind == .set && event?.value == 15)
        // The upstream's audit log names the device's token, with the device's own author and reason.
        let log = try await bench.upstream.changes(ChangeQuery(prefix: "timeline.", order: .oldestFirst))
        #expect(log.changes.last?.author.name == "token:laptop")
        #expect(log.changes.last?.author.agent != nil)
        #expect(log.changes.last?.reason == "bigger")
        await bench.close()
    }

    @Test("lww: the later change wins, and the earlier is kept as the loser")
    func lastWriterWins() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        try await bench.syncAll()
        try await laptop.set("theme", to: "dark", scope: Self.alice)
        bench.time.advance(by: 1_000)
        try await desktop.set("theme", to: "light", scope: Self.alice)
        try await bench.sync("desktop")
        try await bench.sync("laptop")
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            #expect(try await store.resolve("theme", scope: Self.alice).value == "light")
        }
        let conflicts = try await bench.upstream.conflicts(ConflictQuery())
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.rule == .init(.lww))
        #expect(conflicts.first?.winner.value == "light" && conflicts.first?.winner.device == "desktop")
        #expect(conflicts.first?.losers.map(\.value) == ["dark"] && conflicts.first?.losers.first?.device == "laptop")
        // The key's history shows it as a step.
        let history = try await bench.upstream.history(of: try KeyName("theme"), scope: Self.alice, limit: 10, before: nil)
        #expect(Array(history.steps.map { $0.change.kind }.prefix(2)) == [ChangeEvent.Kind.conflict, .set], "\(history.steps.map { $0.change.kind })")
        // Each replica keeps the conflict too, and tells its watchers.
        #expect(try await laptop.conflicts(ConflictQuery()).map(\.revision) == conflicts.map(\.revision))
        await bench.close()
    }

    @Test("max, min, union and upstream resolve by the key's schema")
    func rulesBySchema() async throws {
        let bench = try await SyncBench()
        _ = try await bench.upstream.register(schemas: [
            "limits.max": try schema(#"{"type": "int", "merge": "max"}"#),
            "limits.min": try schema(#"{"type": "int", "merge": "min"}"#),
            "tags": try schema(#"{"type": "array", "merge": "union"}"#),
            "policy": try schema(#"{"type": "string", "merge": "upstream"}"#),
        ])
        let laptop = try await bench.replica("laptop")
        let desktop = try await bench.replica("desktop")
        try await laptop.set("tags", to: ["a", "b"], scope: Self.alice)
        try await bench.syncAll()
        try await laptop.set("limits.max", to: 10, scope: Self.alice)
        try await laptop.set("limits.min", to: 10, scope: Self.alice)
        try await laptop.set("tags", to: ["a", "b", "c"], scope: Self.alice)
        try await laptop.set("policy", to: "laptop's", scope: Self.alice)
        bench.time.advance(by: 1_000)
        try await desktop.set("limits.max", to: 5, scope: Self.alice)
        try await desktop.set("limits.min", to: 5, scope: Self.alice)
        try await desktop.set("tags", to: ["b", "d"], scope: Self.alice)
        try await desktop.set("policy", to: "desktop's", scope: Self.alice)
        try await bench.sync("laptop")
        try await bench.sync("desktop")
        try await bench.syncAll()
        for store in [bench.upstream, laptop, desktop] {
            #expect(try await store.resolve("limits.max", scope: Self.alice).value == 10)
            #expect(try await store.resolve("limits.min", scope: Self.alice).value == 5)
            #expect(try await store.resolve("tags", scope: Self.alice).value == ["b", "c", "d"])
            #expect(try await store.resolve("policy", scope: Self.alice).value == "laptop's")
        }
        let rules = try await bench.upstream.conflicts(ConflictQuery()).map { "\($0.key):\($0.rule)" }.sorted()
        #expect(rules == ["limits.max:max", "limits.min:min", "policy:upstream", "tags:union"])
        await bench.close()
    }

    @Test("a fresh replica's early writes fill only what is absent, and its defaults are never pushed")
    func freshReplicaNeverOverwrites() async throws {
        let bench = try await SyncBench()
        _ = try await bench.upstream.register(schemas: ["font": try schema(#"{"type": "int", "default": 12}"#)])
        _ = try await bench.upstream.set("font", to: 15, scope: Self.alice)
        let phone = try await bench.replica("phone")
        // Offline since it was installed: it writes before it has ever synced.
        try await phone.set("font", to: 11, scope: Self.alice)
        try await phone.set("fresh", to: true, scope: Self.alice)
        try await bench.sync("phone")
        #expect(try await bench.upstream.resolve("font", scope: Self.alice).value == 15)
        #expect(try await phone.resolve("font", scope: Self.alice).value == 15)
        #expect(try await bench.upstream.resolve("fresh", scope: Self.alice).value == true)
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery()).first)
        #expect(conflict.losers.first?.value == 11 && conflict.winner.value == 15)
        await bench.close()
    }

    @Test("a change the upstream refuses (a lock) is kept as a loser, and the replica shows the upstream's value")
    func refusedChangeIsKept() async throws {
        let bench = try await SyncBench()
        _ = try await bench.upstream.set("theme", to: "corporate", scope: "/accounts")
        _ = try await bench.upstream.lock("theme", scope: "/accounts")
        let laptop = try await bench.replica("laptop")
        try await bench.sync("laptop")
        // The replica knows the lock: refused at once, locally.
        await #expect(throws: PrefsError.self) { try await laptop.set("theme", to: "dark", scope: Self.alice) }
        // A lock taken upstream after the replica's change: refused there, and kept.
        _ = try await bench.upstream.set("density", to: "compact", scope: "/accounts")
        try await bench.sync("laptop")
        try await laptop.set("density", to: "roomy", scope: Self.alice)
        _ = try await bench.upstream.lock("density", scope: "/accounts")
        try await bench.sync("laptop")
        #expect(try await laptop.resolve("density", scope: Self.alice).value == "compact")
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery(key: "density")).first)
        #expect(conflict.rule == .refused && conflict.losers.first?.value == "roomy")
        await bench.close()
    }

    @Test("a replica refuses at once a write outside its token's scope, and locks")
    func outsideTheScope() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        try await bench.sync("laptop")
        let outside = await #expect(throws: PrefsError.self) { try await laptop.set("theme", to: "dark", scope: "/accounts/bob") }
        #expect(outside?.code == .forbidden)
        let lock = await #expect(throws: PrefsError.self) { try await laptop.lock("theme", scope: Self.alice) }
        #expect(lock?.code == .forbidden)
        #expect(laptop.replicaStatus?.outbox == 0)
        await bench.close()
    }

    @Test("a device whose clock is days ahead does not win for ever")
    func clockAheadIsClamped() async throws {
        let bench = try await SyncBench()
        let fast = try await bench.replica("fast", skew: 3 * 86_400_000)
        let right = try await bench.replica("right")
        try await bench.syncAll()
        try await fast.set("theme", to: "fast's", scope: Self.alice)
        try await bench.sync("fast")
        // Ten minutes later, by the right clock, on a device that has not seen fast's change.
        bench.time.advance(by: 10 * 60_000)
        try await right.set("theme", to: "right's", scope: Self.alice)
        try await bench.sync("right")
        #expect(try await bench.upstream.resolve("theme", scope: Self.alice).value == "right's")
        await bench.close()
    }

    @Test("a value deleted upstream does not come back: not from a replica that held it, nor from an older offline edit")
    func deletedValuesStayDeleted() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        let phone = try await bench.replica("phone")
        _ = try await bench.upstream.set("theme", to: "dark", scope: Self.alice)
        _ = try await bench.upstream.set("density", to: "compact", scope: Self.alice)
        try await bench.syncAll()
        // The phone, offline, edits the density; later the upstream deletes both.
        try await phone.set("density", to: "roomy", scope: Self.alice)
        bench.time.advance(by: 60_000)
        _ = try await bench.upstream.reset("theme", scope: Self.alice, recursive: false)
        _ = try await bench.upstream.reset("density", scope: Self.alice, recursive: false)
        // The laptop held "dark" and comes back after a restart: it takes the deletion in.
        let again = try await bench.restart("laptop")
        try await bench.sync("laptop")
        try await bench.sync("phone")
        try await bench.syncAll()
        for store in [bench.upstream, again, phone] {
            #expect(try await store.resolve("theme", scope: Self.alice).source == .none)
            #expect(try await store.resolve("density", scope: Self.alice).source == .none)
        }
        // The phone's edit, older than the deletion, lost to it, and is kept.
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery(key: "density")).first)
        #expect(conflict.winner.value == nil && conflict.losers.first?.value == "roomy" && conflict.losers.first?.device == "phone")
        // An edit made after the deletion is a new value, and wins.
        bench.time.advance(by: 60_000)
        try await phone.set("density", to: "cosy", scope: Self.alice)
        try await bench.syncAll()
        #expect(try await again.resolve("density", scope: Self.alice).value == "cosy")
        _ = laptop
        await bench.close()
    }

    @Test("a deletion compacted out of the upstream's log still beats an older offline edit pushed late")
    func compactedDeletionStaysDeleted() async throws {
        // A log of 4 changes: a few writes compact the deletion away.
        let bench = try await SyncBench(upstreamRetains: 4)
        let phone = try await bench.replica("phone")
        _ = try await bench.upstream.set("density", to: "compact", scope: Self.alice)
        try await bench.sync("phone")
        // The phone, offline, edits the density; a minute later the upstream deletes it.
        bench.replicas["phone"]!.transport.online.withLock { $0 = false }
        try await phone.set("density", to: "roomy", scope: Self.alice)
        bench.time.advance(by: 60_000)
        _ = try await bench.upstream.reset("density", scope: Self.alice, recursive: false)
        let deletion = bench.upstream.committedRevision
        for index in 0..<8 {
            _ = try await bench.upstream.set(try KeyName("filler.k\(index)"), to: .integer(Int64(index)), scope: Self.alice, ifRevision: nil)
        }
        let page = try await bench.upstream.storage.changeLog(after: 0, through: bench.upstream.committedRevision, limit: 100)
        try #require(!page.changes.contains { $0.event.revision == deletion }, "the deletion is compacted away")
        // The phone comes back: its edit, older than the deletion, must lose to it as it does
        // while the log still holds the deletion (deletedValuesStayDeleted).
        bench.replicas["phone"]!.transport.online.withLock { $0 = true }
        try await bench.sync("phone")
        try await bench.syncAll()
        for store in [bench.upstream, phone] {
            #expect(try await store.resolve("density", scope: Self.alice).source == .none)
        }
        let conflict = try #require(try await bench.upstream.conflicts(ConflictQuery(key: "density")).first)
        #expect(conflict.winner.value == nil && conflict.losers.first?.value == "roomy" && conflict.losers.first?.device == "phone")
        await bench.close()
    }

    @Test("an outbox survives a restart, and a change pushed twice is applied once")
    func outboxSurvivesRestart() async throws {
        let bench = try await SyncBench()
        let laptop = try await bench.replica("laptop")
        try await bench.sync("laptop")
        try await laptop.set("theme", to: "dark", scope: Self.alice)
        // Pushed, but the answer is lost: the replica is killed before it takes it in.
        let request = try #require(laptop.syncRequest(pushing: true))
        let grant = AccessGrant(token: "laptop", role: .writer, scope: Self.alice)
        let first = try await bench.upstream.exchange(request, grant: grant, context: WriteContext())
        #expect(first.results.map(\.outcome) == [.applied])
        let revision = bench.upstream.committedRevision
        let again = try await bench.restart("laptop")
        #expect(again.replicaStatus?.outbox == 1)
        try await bench.sync("laptop")
        #expect(bench.upstream.committedRevision == revision)
        #expect(again.replicaStatus?.outbox == 0)
        #expect(try await again.resolve("theme", scope: Self.alice).value == "dark")
        await bench.close()
    }
}
