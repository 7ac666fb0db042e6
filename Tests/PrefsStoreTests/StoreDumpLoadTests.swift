import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: dump and load")
struct StoreDumpLoadTests {
    /// A store with values at several scopes, locks (one above a value set before it), and schemas.
    private func populate(_ store: EmbeddedStore) async throws {
        try await store.register(schemas: [
            "timeline.fontSize": PreferenceSchema(type: .int, defaultValue: 14, minimum: 8, maximum: 72, description: "Size"),
            "timeline.mode": PreferenceSchema(type: .enum, defaultValue: "collapsed", choices: ["collapsed", "expanded"]),
        ])
        try await store.set("timeline.fontSize", to: 15)
        try await store.set("timeline.fontSize", to: 18, scope: "/accounts/alice")
        try await store.set("timeline.mode", to: "expanded", scope: "/accounts/alice/threads/42")
        try await store.set("compose.draft", to: ["text": "héllo / \"quoted\"", "tags": ["a", "b"], "n": 1.5, "i": 2])
        try await store.set("compose.empty", to: [:], scope: "/accounts/bob")
        try await store.set("compose.locked", to: true, scope: "/accounts/alice/x")
        try await store.lock("compose.locked", scope: "/accounts/alice")
        try await store.lock("timeline.fontSize", scope: "/accounts/bob")
    }

    private func encoded(_ dump: PrefsDump) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(dump)
    }

    @Test("dump, load into a fresh store, dump: the same, byte for byte")
    func roundTrip() async throws {
        try await withStore(makeStore()) { source in
            try await populate(source)
            let dump = try await source.dump(scope: .root)
            #expect(dump.values.count == 6)
            #expect(dump.locks.count == 2)
            #expect(dump.schemas.count == 2)

            // Through JSON, as prefsctl dump > file; prefsctl load file would.
            let wire = try encoded(dump)
            try await withStore(makeStore()) { target in
                try await target.load(try JSONDecoder().decode(PrefsDump.self, from: wire))
                let again = try await target.dump(scope: .root)
                #expect(again == dump)
                #expect(try encoded(again) == wire)

                // And it resolves the same.
                for (key, scope) in [
                    ("timeline.fontSize", "/accounts/alice/threads/42"), ("timeline.fontSize", "/accounts/bob/z"),
                    ("timeline.mode", "/accounts/alice/threads/42/x"), ("compose.locked", "/accounts/alice/x"),
                    ("compose.draft", "/q"),
                ] as [(String, ScopePath)] {
                    let expected = try await source.resolve(key, scope: scope)
                    let actual = try await target.resolve(key, scope: scope)
                    #expect(actual.value == expected.value, "\(key) at \(scope)")
                    #expect(actual.source == expected.source, "\(key) at \(scope)")
                }
            }
        }
    }

    @Test("A subtree dump has only that subtree's values and locks")
    func subtree() async throws {
        try await withStore(makeStore()) { store in
            try await populate(store)
            let alice = try await store.dump(scope: "/accounts/alice")
            #expect(alice.scope == "/accounts/alice")
            #expect(
                alice.values.map { "\($0.key) \($0.scope)" } == [
                    "compose.locked /accounts/alice/x", "timeline.fontSize /accounts/alice",
                    "timeline.mode /accounts/alice/threads/42",
                ])
            #expect(alice.locks == [PrefsDump.Lock(key: "compose.locked", scope: "/accounts/alice")])

            // A subtree dump loads into a fresh store and dumps back the same.
            try await withStore(makeStore()) { target in
                try await target.load(alice)
                #expect(try await target.dump(scope: "/accounts/alice") == alice)
            }
        }
    }

    @Test("A load with one bad entry applies nothing")
    func badEntry() async throws {
        try await withStore(makeStore()) { source in
            try await populate(source)
            let good = try await source.dump(scope: .root)

            var badValue = good
            badValue.values.insert(PrefsDump.Value(key: "timeline.fontSize", scope: "/z", value: 500), at: 3)
            var badKey = good
            badKey.values.append(PrefsDump.Value(key: "Bad.key", scope: "/", value: 1))
            var nullValue = good
            nullValue.values.insert(PrefsDump.Value(key: "n", scope: "/", value: .null), at: 1)
            var outside = good
            outside.scope = "/accounts/bob"
            var badSchema = good
            badSchema.schemas["x"] = PreferenceSchema(type: .enum)

            try await withStore(makeStore()) { target in
                for (dump, code) in [
                    (badValue, PrefsError.Code.invalidValue), (badKey, .invalidKey), (nullValue, .invalidValue),
                    (outside, .invalidRequest), (badSchema, .invalidSchema),
                ] {
                    let error = await #expect(throws: PrefsError.self) { try await target.load(dump) }
                    #expect(error?.code == code)
                }
                let after = try await target.dump(scope: .root)
                #expect(after.values.isEmpty)
                #expect(after.locks.isEmpty)
                #expect(after.schemas.isEmpty)
                #expect(try await target.status().revision == 0)

                // The good dump still loads after all that.
                try await target.load(good)
                #expect(try await target.dump(scope: .root) == good)
            }
        }
    }

    @Test("A dump loads back into the store it came from, leaving the same state")
    func loadBackIntoSameStore() async throws {
        try await withStore(makeStore()) { store in
            try await populate(store)
            let dump = try await store.dump(scope: .root)
            try await store.load(dump)
    
            #expect(try await store.dump(scope: .root) == dump)
        }
    }

    @Test("A dump without locks above values loads back into the same store")
    func loadBackWithoutLocks() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1, scope: "/x")
            try await store.lock("a", scope: "/x")
            try await store.set("b", to: [1, 2])
            let dump = try await store.dump(scope: .root)
            try await store.set("b", to: 3)
            try await store.load(dump)
            #expect(try await store.dump(scope: .root) == dump)
            #expect(try await store.resolve("b").value == [1, 2])
        }
    }

    @Test("A load merges: what the store holds and the dump does not, stays")
    func loadMerges() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("kept.value", to: 1, scope: "/accounts/alice")
            try await store.lock("kept.lock", scope: "/accounts/alice")
            try await store.load(PrefsDump(scope: "/accounts", schemas: [:], values: [PrefsDump.Value(key: "new.value", scope: "/accounts/alice", value: 2)], locks: []))
            let after = try await store.dump(scope: .root)
            #expect(after.values.map(\.key) == ["kept.value", "new.value"])
            #expect(after.locks.map(\.key) == ["kept.lock"])
        }
    }

    @Test("A load replacing a subtree leaves it equal to the dump, and everything outside it as it was")
    func loadReplacingSubtree() async throws {
        try await withStore(makeStore()) { store in
            try await populate(store)
            let replacement = PrefsDump(
                scope: "/accounts/alice", schemas: [:],
                values: [
                    PrefsDump.Value(key: "timeline.fontSize", scope: "/accounts/alice", value: 20),
                    PrefsDump.Value(key: "compose.locked", scope: "/accounts/alice/x", value: false),
                    PrefsDump.Value(key: "compose.new", scope: "/accounts/alice/y", value: "n"),
                ],
                locks: [PrefsDump.Lock(key: "compose.locked", scope: "/accounts/alice")])
            let outsideBefore = try await store.dump(scope: "/accounts/bob")
            let rootValueBefore = try await store.resolve("timeline.fontSize").value
            try await store.load(replacement, replacing: true)

            // The subtree is the dump (with every schema, which are not per scope)…
            var alice = try await store.dump(scope: "/accounts/alice")
            #expect(alice.schemas.count == 2)
            alice.schemas = [:]
            #expect(alice == replacement)
            // …and outside it nothing changed.
            #expect(try await store.dump(scope: "/accounts/bob") == outsideBefore)
            #expect(try await store.resolve("timeline.fontSize").value == rootValueBefore)

            // A lock the dump does not hold is removed too; one left out of a merge is not.
            try await store.lock("timeline.mode", scope: "/accounts/alice/threads")
            try await store.load(replacement)
            #expect(try await store.dump(scope: "/accounts/alice").locks.count == 2)
            try await store.load(replacement, replacing: true)
            #expect(try await store.dump(scope: "/accounts/alice").locks == replacement.locks)
        }
    }

    @Test("A load replacing a subtree is all or nothing: refused, it removes nothing")
    func loadReplacingIsAllOrNothing() async throws {
        try await withStore(makeStore()) { store in
            try await populate(store)
            let before = try await store.dump(scope: .root)
            let revision = try await store.status().revision
            let refused = PrefsDump(
                scope: "/accounts/alice", schemas: [:],
                values: [PrefsDump.Value(key: "timeline.fontSize", scope: "/accounts/alice", value: 100)], locks: [])
            let error = await #expect(throws: PrefsError.self) { try await store.load(refused, replacing: true) }
            #expect(error?.code == .invalidValue)
            #expect(try await store.dump(scope: .root) == before)
            #expect(try await store.status().revision == revision)

            // Values below a lock outside the subtree cannot be removed, as they cannot be set.
            try await store.set("locked.above", to: 1, scope: "/accounts/alice/z")
            try await store.lock("locked.above", scope: "/accounts")
            let empty = PrefsDump(scope: "/accounts/alice", schemas: [:], values: [], locks: [])
            let locked = await #expect(throws: PrefsError.self) { try await store.load(empty, replacing: true) }
            #expect(locked?.code == .locked)
            #expect(locked?.lock == PreferenceLock(key: "locked.above", scope: "/accounts"))
            #expect(try await store.resolve("timeline.fontSize", scope: "/accounts/alice").value == 18)
        }
    }

    @Test("A lock outside the dump's scope is refused like a value outside it")
    func lockOutsideScope() async throws {
        try await withStore(makeStore()) { store in
            let dump = PrefsDump(scope: "/accounts/bob", schemas: [:], values: [], locks: [PrefsDump.Lock(key: "k", scope: "/")])
            let error = await #expect(throws: PrefsError.self) { try await store.load(dump) }
            #expect(error?.code == .invalidRequest)
        }
    }
}
