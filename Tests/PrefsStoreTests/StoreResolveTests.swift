import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Store: set and resolve across scopes")
struct StoreResolveTests {
    @Test("A value set at a scope applies there and below, the nearest one wins")
    func nearestScope() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("timeline.fontSize", to: 14)
            try await store.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
            try await store.set("timeline.fontSize", to: 16, scope: "/accounts/alice/threads/42")

            let expectations: [(ScopePath, JSONValue, PreferenceSource)] = [
                ("/", 14, .scope("/")),
                ("/accounts", 14, .scope("/")),
                ("/accounts/bob", 14, .scope("/")),
                ("/accounts/alice", 15, .scope("/accounts/alice")),
                ("/accounts/alice/threads/7", 15, .scope("/accounts/alice")),
                ("/accounts/alice/threads/42", 16, .scope("/accounts/alice/threads/42")),
                ("/accounts/alice/threads/42/deeper", 16, .scope("/accounts/alice/threads/42")),
            ]
            for (scope, value, source) in expectations {
                let resolved = try await store.resolve("timeline.fontSize", scope: scope)
                #expect(resolved.value == value, "at \(scope)")
                #expect(resolved.source == source, "at \(scope)")
                #expect(resolved.scope == scope)
                #expect(resolved.key == "timeline.fontSize")
                #expect(resolved.revision == 3)
            }
        }
    }

    @Test("Setting again replaces the value at that scope only")
    func replace() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: "a", scope: "/x")
            try await store.set("k", to: "b", scope: "/")
            try await store.set("k", to: ["c": [1, 2.5, true]], scope: "/x")
            #expect(try await store.resolve("k", scope: "/x").value == ["c": [1, 2.5, true]])
            #expect(try await store.resolve("k").value == "b")
        }
    }

    @Test("An unset key resolves to null with source none; with a schema default, to the default")
    func unsetAndDefault() async throws {
        try await withStore(makeStore()) { store in
            let unset = try await store.resolve("nothing.here", scope: "/a")
            #expect(unset.value == .null)
            #expect(unset.source == .none)
            #expect(unset.revision == 0)

            try await store.register(schemas: ["timeline.fontSize": PreferenceSchema(type: .int, defaultValue: 14)])
            let byDefault = try await store.resolve("timeline.fontSize", scope: "/a")
            #expect(byDefault.value == 14)
            #expect(byDefault.source == .default)
        }
    }

    @Test("Explain gives the chain with the revisions that set each layer")
    func explain() async throws {
        try await withStore(makeStore()) { store in
            try await store.register(schemas: ["k": PreferenceSchema(type: .int, defaultValue: 0)])  // 1
            try await store.set("k", to: 1)  // 2
            try await store.set("k", to: 2, scope: "/a/b")  // 3
            try await store.lock("k", scope: "/a")  // 4
            let resolved = try await store.resolve("k", scope: "/a/b", explain: true)
            #expect(resolved.value == 1)
            #expect(resolved.source == .lock("/a"))
            #expect(
                resolved.chain == [
                    ChainLayer(layer: .lock("/a"), value: 1, revision: 4),
                    ChainLayer(layer: .scope("/a/b"), value: 2, revision: 3),
                    ChainLayer(layer: .scope("/a"), value: nil, revision: nil),
                    ChainLayer(layer: .scope("/"), value: 1, revision: 2),
                    ChainLayer(layer: .default, value: 0, revision: nil),
                ])
            #expect(try await store.resolve("k", scope: "/a/b").chain == nil)
        }
    }

    @Test("Overrides beat everything, are never stored, and are listed")
    func overrides() async throws {
        try await withStore(makeStore { $0.overrides = ["k.over": 99] }) { store in
            try await store.set("k.over", to: 1, scope: "/a")
            try await store.lock("k.over", scope: "/a")
            let resolved = try await store.resolve("k.over", scope: "/a/b", explain: true)
            #expect(resolved.value == 99)
            #expect(resolved.source == .override)
            #expect(resolved.chain?.first == ChainLayer(layer: .override, value: 99, revision: nil))
            #expect(try await store.dump(scope: .root).values == [PrefsDump.Value(key: "k.over", scope: "/a", value: 1)])
            #expect(try await store.status().counts.overrides == 1)
        }
    }

    @Test("An override that breaks the rules is refused when the store opens")
    func badOverride() throws {
        #expect(throws: PrefsError.self) { try makeStore { $0.overrides = ["Bad": 1] } }
        let null = #expect(throws: PrefsError.self) { try makeStore { $0.overrides = ["k": .null] } }
        #expect(null?.code == .invalidValue)
    }

    @Test("list gives the effective values at a scope, sorted, filtered by prefix, without unset keys")
    func list() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("timeline.b", to: 1)
            try await store.set("timeline.a", to: 2, scope: "/u")
            try await store.set("compose.x", to: 3, scope: "/u/deeper")
            try await store.register(schemas: ["timeline.c": PreferenceSchema(type: .int, defaultValue: 7)])
            try await store.register(schemas: ["timeline.nodefault": PreferenceSchema(type: .int)])

            let atU = try await store.list(scope: "/u", prefix: nil)
            #expect(atU.map(\.key) == ["timeline.a", "timeline.b", "timeline.c"])
            #expect(atU.map(\.value) == [2, 1, 7])
            #expect(atU.map(\.source) == [.scope("/u"), .scope("/"), .default])

            let timeline = try await store.list(scope: "/u/deeper", prefix: "timeline.")
            #expect(timeline.map(\.key) == ["timeline.a", "timeline.b", "timeline.c"])
            let compose = try await store.list(scope: "/u/deeper", prefix: "compose")
            #expect(compose.map(\.key) == ["compose.x"])
            #expect(try await store.list(scope: .root, prefix: "none.").isEmpty)
        }
    }

    @Test("Bad writes are refused with the right code, and store nothing")
    func refusals() async throws {
        try await withStore(makeStore { $0.rules = PreferenceWriteRules(maximumValueBytes: 16) }) { store in
            let badKey = await #expect(throws: PrefsError.self) { try await store.set("Bad.key", to: 1) }
            #expect(badKey?.code == .invalidKey)
            let null = await #expect(throws: PrefsError.self) { try await store.set("k", to: .null) }
            #expect(null?.code == .invalidValue)
            let large = await #expect(throws: PrefsError.self) {
                try await store.set("k", to: .string(String(repeating: "x", count: 15)))
            }
            #expect(large?.code == .tooLarge)
            let badResolve = await #expect(throws: PrefsError.self) { try await store.resolve("", scope: .root) }
            #expect(badResolve?.code == .invalidKey)

            #expect(try await store.status().revision == 0)
            #expect(try await store.resolve("k").source == .none)
            try await store.set("k", to: .string(String(repeating: "x", count: 14)))
            #expect(try await store.status().revision == 1)
        }
    }

    @Test("Strict stores refuse keys without a schema with unknown_key")
    func strict() async throws {
        try await withStore(makeStore { $0.rules = PreferenceWriteRules(strict: true) }) { store in
            let error = await #expect(throws: PrefsError.self) { try await store.set("free.key", to: 1) }
            #expect(error?.code == .unknownKey)
            try await store.register(schemas: ["free.key": PreferenceSchema(type: .int)])
            try await store.set("free.key", to: 1)
            #expect(try await store.resolve("free.key").value == 1)
        }
    }

    @Test("status counts what the store holds")
    func status() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1)
            try await store.set("a", to: 2, scope: "/x")
            try await store.set("b", to: 3)
            try await store.lock("a", scope: "/x")
            try await store.register(schemas: ["c": PreferenceSchema(type: .bool)])
            let status = try await store.status()
            #expect(status.revision == 5)
            #expect(status.oldestRevision == 1)
            #expect(status.database == store.path)
            #expect(status.version == prefsVersion)
            #expect(status.counts.keys == 3)
            #expect(status.counts.values == 3)
            #expect(status.counts.locks == 1)
            #expect(status.counts.schemas == 1)
            #expect(status.counts.watchers == 0)
        }
    }

    @Test("status's uptime counts the seconds since the store opened")
    func uptime() async throws {
        let opening = ContinuousClock.now
        try await withStore(makeStore()) { store in
            #expect(try await Duration.seconds(store.status().uptimeSeconds) <= ContinuousClock.now - opening)
            // It grows with real time: the wait ends once a whole second is counted.
            try await waitUntil("the uptime reaches a second", timeout: .seconds(30)) {
                try await store.status().uptimeSeconds >= 1
            }
            #expect(try await Duration.seconds(store.status().uptimeSeconds) <= ContinuousClock.now - opening)
        }
    }
}
