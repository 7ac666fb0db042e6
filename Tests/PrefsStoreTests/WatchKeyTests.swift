import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watch: keys and prefixes", .timeLimit(.minutes(5)))
struct WatchKeyTests {
    @Test("A watcher of key A sees every change of A, in order, and nothing of B")
    func exactKey() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["a.key"])))
            try await store.set("a.key", to: 1)  // 1
            try await store.set("b.key", to: 1)  // 2
            try await store.set("a.key", to: 2, scope: "/u")  // 3
            try await store.apply(PreferenceBatch(operations: [.set("b.key", 2), .set("a.key", 3), .set("a.keyX", 0)]))  // 4, 5, 6
            try await store.lock("a.key", scope: "/u")  // 7
            try await store.lock("b.key", scope: "/u")  // 8
            try await store.unlock("a.key", scope: "/u")  // 9
            try await store.register(schemas: ["a.key": PreferenceSchema(type: .int)])  // 10
            try await store.reset("a.key", scope: .root, recursive: true)  // 11, 12
            try await store.set("b.key", to: 3)  // 13
            try await store.set("a.key", to: 4)  // 14: the last one, so anything of B would have come before it

            let events = try await watch.through(revision: 14)
            #expect(
                events.map(\.summary) == [
                    "1 set a.key@/=1",
                    "3 set a.key@/u=2",
                    "5 set a.key@/=3",
                    "7 lock a.key@/u",
                    "9 unlock a.key@/u",
                    #"10 schema a.key={"type":"int"}"#,
                    "11 reset a.key@/",
                    "12 reset a.key@/u",
                    "14 set a.key@/=4",
                ])
        }
    }

    @Test("A prefix watch sees every key starting with the prefix, and no other")
    func prefix() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(prefixes: ["timeline."])))
            try await store.set("timeline.fontSize", to: 1)  // 1
            try await store.set("timelines.x", to: 1)  // 2
            try await store.set("compose.timeline.x", to: 1)  // 3
            try await store.set("timeline", to: 1)  // 4
            try await store.set("timeline.a.b", to: 2, scope: "/s")  // 5
            try await store.set("time", to: 1)  // 6
            try await store.set("timeline.z", to: 3)  // 7
            let events = try await watch.through(revision: 7)
            #expect(events.map(\.summary) == ["1 set timeline.fontSize@/=1", "5 set timeline.a.b@/s=2", "7 set timeline.z@/=3"])
        }
    }

    @Test("Keys and prefixes combine; a watch with neither sees every key")
    func combinationsAndEverything() async throws {
        try await withStore(makeStore()) { store in
            var mixed = WatchReader(store.watch(WatchRequest(keys: ["compose.max"], prefixes: ["timeline.", "theme."])))
            var everything = WatchReader(store.watch(WatchRequest()))
            try await store.set("compose.max", to: 1)  // 1
            try await store.set("compose.min", to: 1)  // 2
            try await store.set("theme.color", to: "red")  // 3
            try await store.set("timeline.x", to: 1)  // 4
            try await store.set("other", to: 1)  // 5
            try await store.set("compose.max", to: 2)  // 6
            #expect(try await mixed.through(revision: 6).map(\.revision) == [1, 3, 4, 6])
            #expect(try await everything.through(revision: 6).map(\.revision) == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test("Several watchers of the same key each get every event")
    func severalWatchers() async throws {
        try await withStore(makeStore()) { store in
            var readers = (0..<5).map { _ in WatchReader(store.watch(WatchRequest(keys: ["k"]))) }
            #expect(try await store.status().counts.watchers == 5)
            for value in 1...10 { try await store.set("k", to: .integer(Int64(value))) }
            for index in readers.indices {
                let events = try await readers[index].take(10)
                #expect(events.map(\.value) == (1...10).map { .integer(Int64($0)) })
            }
        }
    }

    @Test("Events carry the new value and scope, not a source")
    func eventShape() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            try await store.set("k", to: ["nested": [1, 2]], scope: "/a/b")
            let event = try #require(try await watch.next())
            #expect(event == ChangeEvent(revision: 1, kind: .set, key: "k", scope: "/a/b", value: ["nested": [1, 2]]))
            #expect(event.source == nil)
        }
    }

    @Test("A watch naming an invalid key ends at once with invalid_key")
    func invalidKey() async throws {
        try await withStore(makeStore()) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["ok", "Not OK"])))
            let (events, error) = await watch.rest()
            #expect(events.isEmpty)
            #expect((error as? PrefsError)?.code == .invalidKey)
        }
    }

    @Test("A watch that is dropped is unsubscribed")
    func dropped() async throws {
        try await withStore(makeStore()) { store in
            do {
                var watch = WatchReader(store.watch(WatchRequest(keys: ["k"])))
                #expect(try await store.status().counts.watchers == 1)
                try await store.set("k", to: 1)
                #expect(try await watch.next()?.revision == 1)
            }
            #expect(try await store.status().counts.watchers == 0)
            try await store.set("k", to: 2)
        }
    }
}
