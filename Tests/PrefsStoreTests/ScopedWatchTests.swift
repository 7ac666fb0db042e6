import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watch: effective values at a scope", .timeLimit(.minutes(5)))
struct ScopedWatchTests {
    @Test("Woken only when the effective value at the scope changes")
    func effectiveOnly() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/accounts/alice")))
            try await store.set("k", to: 1)  // 1: none → 1
            try await store.set("k", to: 2, scope: "/accounts/alice")  // 2: 1 → 2
            try await store.set("k", to: 3)  // 3: hidden by alice's own value
            try await store.set("k", to: 9, scope: "/accounts/bob")  // 4: elsewhere
            try await store.set("k", to: 5, scope: "/accounts/alice/threads/1")  // 5: below
            try await store.set("k", to: 2, scope: "/accounts")  // 6: hidden
            try await store.set("other", to: 1, scope: "/accounts/alice")  // 7: another key
            try await store.reset("k", scope: "/accounts/alice", recursive: false)  // 8: 2 → 2 (from /accounts): no change
            try await store.reset("k", scope: "/accounts", recursive: false)  // 9: 2 → 3 from /
            try await store.set("k", to: 3, scope: "/accounts/alice")  // 10: same value, other source: no change
            try await store.set("k", to: 4, scope: "/accounts/alice")  // 11: 3 → 4

            let events = try await watch.through(revision: 11)
            #expect(
                events.map(\.summary) == [
                    "1 set k@/accounts/alice=1 (scope:/)",
                    "2 set k@/accounts/alice=2 (scope:/accounts/alice)",
                    "9 reset k@/accounts/alice=3 (scope:/)",
                    "11 set k@/accounts/alice=4 (scope:/accounts/alice)",
                ])
        }
    }

    @Test("A change at / hidden by the scope's value does not wake it; resetting the scope's value does")
    func hiddenThenRevealed() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: "root")  // 1
            try await store.set("k", to: "mine", scope: "/s")  // 2
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/s")))
            try await store.set("k", to: "root 2")  // 3: hidden
            try await store.set("k", to: "root 3")  // 4: hidden
            try await store.reset("k", scope: "/s", recursive: false)  // 5: reveals root 3
            let event = try #require(try await watch.next())
            #expect(event.summary == "5 reset k@/s=\"root 3\" (scope:/)")
        }
    }

    @Test("Locks, unlocks, schema defaults and resets to nothing, seen at the scope")
    func everyLayer() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/a/b")))
            try await store.register(schemas: ["k": PreferenceSchema(type: .int, defaultValue: 10)])  // 1: none → 10
            try await store.set("k", to: 1)  // 2: → 1
            try await store.set("k", to: 2, scope: "/a/b")  // 3: → 2
            try await store.lock("k", scope: "/a")  // 4: → 1 (pinned from /)
            try await store.set("k", to: 5, scope: "/a")  // 5: → 5 (lock scope's own value)
            try await store.unlock("k", scope: "/a")  // 6: → 2
            try await store.lock("k", scope: "/a/b")  // 7: lock at the scope itself pins 2: no change
            try await store.unlock("k", scope: "/a/b")  // 8: no change
            try await store.reset("k", scope: .root, recursive: true)  // 9, 10, 11: /, /a (→ 2 still), /a/b (→ 10)
            try await store.register(schemas: ["k": PreferenceSchema(type: .int)])  // 12: → nothing

            let events = try await watch.through(revision: 12)
            #expect(
                events.map(\.summary) == [
                    #"1 schema k@/a/b=10 (default)"#,
                    "2 set k@/a/b=1 (scope:/)",
                    "3 set k@/a/b=2 (scope:/a/b)",
                    "4 lock k@/a/b=1 (lock:/a)",
                    "5 set k@/a/b=5 (lock:/a)",
                    "6 unlock k@/a/b=2 (scope:/a/b)",
                    "11 reset k@/a/b=10 (default)",
                    "12 schema k@/a/b (none)",
                ])
        }
    }

    @Test("Scoped watches of several keys follow each key's own effective value")
    func severalKeys() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(prefixes: ["p."], scope: "/s")))
            try await store.set("p.one", to: 1, scope: "/s")  // 1
            try await store.set("p.two", to: 2)  // 2
            try await store.set("p.one", to: 3)  // 3: hidden for p.one
            try await store.set("q.one", to: 1)  // 4: not selected
            try await store.set("p.two", to: 4, scope: "/s/below")  // 5: below
            try await store.set("p.two", to: 5)  // 6
            let events = try await watch.through(revision: 6)
            #expect(events.map(\.summary) == ["1 set p.one@/s=1 (scope:/s)", "2 set p.two@/s=2 (scope:/)", "6 set p.two@/s=5 (scope:/)"])
        }
    }

    @Test("Overrides pin the effective value: scoped watches of an overridden key are never woken")
    func overridden() async throws {
        try await withStore(makeStore { $0.overrides = ["k": 0] }) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k", "j"], scope: "/s")))
            try await store.set("k", to: 1, scope: "/s")  // 1
            try await store.set("k", to: 2)  // 2
            try await store.set("j", to: 3)  // 3
            let events = try await watch.through(revision: 3)
            #expect(events.map(\.summary) == ["3 set j@/s=3 (scope:/)"])
        }
    }
}
