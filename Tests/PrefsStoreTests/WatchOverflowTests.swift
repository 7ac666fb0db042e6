import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watch: slow watchers", .timeLimit(.minutes(5)))
struct WatchOverflowTests {
    @Test("A slow watcher ends with overflow at the last revision it got; a reading watcher sees all 50")
    func slowWatcherOverflows() async throws {
        try await withStore(makeStore { $0.watchBufferLimit = 8 }) { store in
            var slow = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            var reading = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            var seen: [ChangeEvent] = []
            for value in 1...50 {
                try await store.set("k", to: .integer(Int64(value)))
                // Reading in step with the writes: this watcher never has more than one event waiting.
                seen += try await reading.take(1)
            }
            #expect(seen.map(\.revision) == Array(1...50))
            #expect(seen.map(\.value) == (1...50).map { .integer(Int64($0)) })

            let (events, error) = await slow.rest()
            #expect(error == nil)
            let overflow = try #require(events.last)
            #expect(overflow.kind == .overflow)
            let received = events.dropLast()
            #expect(!received.isEmpty)
            #expect(received.count < 8)
            #expect(overflow.revision == received.last?.revision)
            // What it did receive is a gap-free start, so resuming from the overflow revision loses nothing.
            #expect(received.map(\.revision) == Array(1...Revision(received.count)))
            #expect(!received.contains { $0.kind.isNotice })

            // Resuming from there gives exactly the rest.
            var resumed = WatchReader(store.watch(WatchRequest(keys: ["k"], since: overflow.revision)))
            let rest = try await resumed.through(revision: 50)
            #expect(rest.map(\.revision) == Array((overflow.revision + 1)...50))

            // The overflowed watch is gone from the hub; the reading one and the resumed one remain.
            #expect(try await store.status().counts.watchers == 2)
        }
    }

    @Test("Replay goes at the watcher's pace: a small buffer does not overflow while resuming")
    func replayIsPaced() async throws {
        try await withStore(makeStore { $0.watchBufferLimit = 8 }) { store in
            try await store.apply(PreferenceBatch(operations: (1...50).map { .set("k", .integer(Int64($0))) }))
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 0)))
            let events = try await watch.take(50)
            #expect(events.map(\.revision) == Array(1...50))
            #expect(!events.contains { $0.kind == .overflow })
            try await store.set("k", to: 51)
            #expect(try await watch.next()?.revision == 51)
        }
    }

    @Test("A replaying watcher that falls a whole buffer behind the live changes ends with overflow, and resumes")
    func replayingWatcherOverflows() async throws {
        try await withStore(makeStore { $0.watchBufferLimit = 8 }) { store in
            try await store.apply(PreferenceBatch(operations: (1...50).map { .set("k", .integer(Int64($0))) }))
            var stalled = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 0)))
            // Nobody reads while 20 live changes arrive: the replay stalls and the held-back ones pile up.
            for value in 51...70 { try await store.set("k", to: .integer(Int64(value))) }
            let (events, error) = await stalled.rest()
            #expect(error == nil)
            let overflow = try #require(events.last)
            #expect(overflow.kind == .overflow)
            let received = events.dropLast()  // none, if the replay had not started before the flood
            #expect(received.map(\.revision) == (0..<Revision(received.count)).map { $0 + 1 })
            #expect(overflow.revision == Revision(received.count))

            var resumed = WatchReader(store.watch(WatchRequest(keys: ["k"], since: overflow.revision)))
            let rest = try await resumed.through(revision: 70)
            #expect(rest.map(\.revision) == Array((overflow.revision + 1)...70))
        }
    }

    @Test("A slow watcher of one key is not disturbed by a flood of changes to another")
    func otherKeysDoNotCount() async throws {
        try await withStore(makeStore { $0.watchBufferLimit = 8 }) { store in
            var watch = WatchReader(store.watch(WatchRequest(keys: ["quiet"])))
            try await store.apply(PreferenceBatch(operations: (1...100).map { .set("noisy", .integer(Int64($0))) }))
            try await store.set("quiet", to: 1)
            #expect(try await watch.next()?.summary == "101 set quiet@/=1")
        }
    }
}
