import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// A write that changes nothing makes no revision, no change-log row and no event, and answers
/// the current revision: a value set again, in a `set`, a batch or a load.
@Suite("Writes that change nothing", .timeLimit(.minutes(5)))
struct UnchangedWriteTests {
    /// Values of every kind, each with the same value written another way.
    static let sameValues: [(JSONValue, String)] = [
        (true, "true"), (42, "42"), (-7, "-7.0"), (2.5, "2.50"), ("text", #""text""#), ([1, "a", ["z": nil]], #"[1, "a", {"z": null}]"#),
        (["b": 1, "a": [2]], #"{ "a": [2], "b": 1 }"#),
    ]

    @Test("Setting the value already stored makes no revision, no change-log row and no event")
    func setAgain() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest()))
            for (index, (value, spelling)) in Self.sameValues.enumerated() {
                let key = "same.k\(index)"
                let written = try await store.set(key, to: value, scope: "/a").revision
                #expect(try await store.set(key, to: value, scope: "/a").revision == written)
                #expect(try await store.set(key, to: try JSONValue(parsing: spelling), scope: "/a").revision == written)
                #expect(try await store.status().revision == written)
            }
            // The events: one per key, nothing for the writes again.
            let last = try await store.set("same.other", to: 1).revision
            let events = try await watch.through(revision: last)
            #expect(events.map(\.revision) == Array(1...last))
            #expect(events.map(\.key) == Self.sameValues.indices.map { "same.k\($0)" } + ["same.other"])
            #expect(try await sqlite3(store.path, "SELECT count(*) FROM change") == "\(last)")
        }
    }

    @Test("A batch: each operation that changes nothing has the current revision; with none that changes, no revision")
    func batch() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1)
            try await store.set("b", to: 2, scope: "/x")
            let unchanged = try await store.apply(
                PreferenceBatch(operations: [.set("a", 1), .set("b", 2, scope: "/x"), .reset("never.set")]))
            #expect(unchanged == WriteResult(revision: 2, revisions: [2, 2, 2]))
            let mixed = try await store.apply(
                PreferenceBatch(operations: [.set("a", 1), .set("a", 3), .set("b", 2, scope: "/x"), .set("a", 3), .set("b", 4, scope: "/x")]))
            #expect(mixed == WriteResult(revision: 4, revisions: [2, 3, 3, 3, 4]))
            #expect(try await store.status().revision == 4)
        }
    }

    @Test("Loading a dump of the store changes nothing; a lock or schema again neither")
    func loadOwnDump() async throws {
        try await withStore(makeStore()) { store in
            try await store.register(schemas: ["n": PreferenceSchema(type: .int, maximum: 9)])
            try await store.set("n", to: 3, scope: "/a")
            try await store.set("o", to: ["x": [1.5, "y"]], scope: "/a/b")
            try await store.lock("o", scope: "/a")
            let revision = try await store.status().revision
            let dump = try await store.dump(scope: .root)
            #expect(try await store.load(dump).revision == revision)
            #expect(try await store.lock("o", scope: "/a").revision == revision)
            #expect(try await store.register(schemas: ["n": PreferenceSchema(type: .int, maximum: 9)]).revision == revision)
            #expect(try await store.status().revision == revision)
            #expect(try await store.dump(scope: .root) == dump)
        }
    }
}
