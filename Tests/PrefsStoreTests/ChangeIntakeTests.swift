import Foundation
import GRDB
@testable import PrefsEngine
import PrefsKit
@testable import PrefsStore
import Synchronization
import TestHarness
import Testing

/// The engine takes in changes another writer committed to its database — what several hosts on
/// one PostgreSQL database do to each other — from the change log, exactly once and in order:
/// at the start of its own next transaction, and when woken. SQLite has one owner, so the second
/// writer here is faked: a raw connection to the same file that writes rows and log entries as
/// another engine would.
@Suite("Engine: changes committed elsewhere", .timeLimit(.minutes(5)))
struct ChangeIntakeTests {
    /// Writes, as another engine would, `key` = `value` at `scope` with the next revision (and the
    /// log entry for it), bypassing `store`.
    static func writeElsewhere(_ store: EmbeddedStore, _ key: String, _ value: JSONValue, scope: ScopePath) throws {
        try writeElsewhere(store, [(key, value, scope)])
    }

    /// Writes, as another engine would, each of `writes` with the next revision, in one transaction.
    static func writeElsewhere(_ store: EmbeddedStore, _ writes: [(key: String, value: JSONValue, scope: ScopePath)]) throws {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        try queue.write { db in
            for (key, value, scope) in writes {
                let revision = try ChangeLogRecords.bounds(db).current + 1
                let old = try String.fetchOne(
                    db, sql: "SELECT value FROM preference WHERE key = ? AND scope = ?", arguments: [key, scope.path])
                try PreferenceRecords.upsertValue(db, key: key, scope: scope, value: value, revision: revision)
                try ChangeLogRecords.append(
                    db,
                    LoggedChange(
                        event: ChangeEvent(revision: revision, kind: .set, key: key, scope: scope, value: value), oldValue: old,
                        time: Date().timeIntervalSince1970))
            }
        }
    }

    @Test("The next transaction takes them in first: the cache has them and watchers get them before the engine's own, once")
    func takenInAtTheNextTransaction() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1, scope: "/accounts")  // 1
            var keyWatch = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            var scopedWatch = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/accounts/alice")))
            try Self.writeElsewhere(store, "k", 2, scope: "/accounts/alice")  // 2, elsewhere
            try Self.writeElsewhere(store, "k", 3, scope: "/")  // 3, elsewhere: hidden at alice
            #expect(try await store.resolve("k", scope: "/accounts/alice").value == 1, "not taken in yet")

            let own = try await store.set("other", to: true)
            #expect(own.revision == 4)
            let resolved = try await store.resolve("k", scope: "/accounts/alice")
            #expect(resolved.value == 2 && resolved.source == .scope("/accounts/alice") && resolved.revision == 4)
            #expect(try await store.resolve("k").value == 3)
            #expect(try await keyWatch.take(2).map(\.summary) == ["2 set k@/accounts/alice=2", "3 set k@/=3"])
            #expect(try await scopedWatch.take(1).map(\.summary) == ["2 set k@/accounts/alice=2 (scope:/accounts/alice)"])

            // Nothing twice: the next change the watchers see is the next one made.
            try await store.set("k", to: 5, scope: "/accounts/alice")
            #expect(try await keyWatch.take(1).map(\.summary) == ["5 set k@/accounts/alice=5"])
            #expect(try await scopedWatch.take(1).map(\.summary) == ["5 set k@/accounts/alice=5 (scope:/accounts/alice)"])
        }
    }

    @Test("A wake-up takes them in without a write of the engine's own, once however often it comes")
    func takenInWhenWoken() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(prefixes: ["k"])))
            try Self.writeElsewhere(store, "k.a", "x", scope: "/")  // 1
            try Self.writeElsewhere(store, "k.b", "y", scope: "/s")  // 2
            for _ in 0..<3 { store.catchUp() }
            #expect(try await watch.take(2).map(\.summary) == ["1 set k.a@/=\"x\"", "2 set k.b@/s=\"y\""])
            // The cache takes changes in before the watchers hear of them.
            #expect(try await store.status().revision == 2)
            #expect(try await store.resolve("k.b", scope: "/s/t").value == "y")

            try Self.writeElsewhere(store, "k.a", "z", scope: "/")  // 3
            store.catchUp()
            try await store.set("k.c", to: 1)  // 4: the engine's own, after it
            #expect(try await watch.take(2).map(\.summary) == ["3 set k.a@/=\"z\"", "4 set k.c@/=1"])
        }
    }

    @Test("A notification announcing a revision taken in already reads nothing; one announcing a newer revision takes it in")
    func announcedRevisions() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            try Self.writeElsewhere(store, "k", 1, scope: "/")  // 1, elsewhere
            store.catchUp(toReach: 0)
            // A catch-up, or a wait left to the writer, is recorded before `catchUp` returns:
            // neither was started, so the log is not read, now or later.
            let started = store.catchingUp.withLock { $0.running || $0.leftToWriter != nil }
            #expect(!started, "revision 0 is taken in: the log is not read")
            #expect(try await store.status().revision == 0)
            store.catchUp(toReach: 1)
            #expect(try await watch.take(1).map(\.summary) == ["1 set k@/=1"])
        }
    }

    @Test("A wake-up more than a page behind reads page after page, until one comes back short")
    func takenInPageByPage() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k.0", "k.2499"])))
            try Self.writeElsewhere(store, (0..<2500).map { ("k.\($0)", .integer(Int64($0)), ScopePath.root) })
            store.catchUp()
            #expect(try await watch.take(2).map(\.summary) == ["1 set k.0@/=0", "2500 set k.2499@/=2499"])
            #expect(try await store.status().revision == 2500)
            #expect(try await store.resolve("k.1000").value == 1000)
        }
    }

    @Test("Changes that skip a revision are refused, not taken in with a gap")
    func aGapIsRefused() async throws {
        try await withStore(makeStore()) { store async throws in
            let skipping = ChangeLogPage(
                changes: [LoggedChange(event: ChangeEvent(revision: 2, kind: .set, key: "k", scope: .root, value: 1))],
                oldestRevision: 1)
            #expect(throws: PrefsError.self) { try store.intake.take(skipping) }
            #expect(try await store.status().revision == 0)
            #expect(try await store.resolve("k").source == .none)
        }
    }
}
