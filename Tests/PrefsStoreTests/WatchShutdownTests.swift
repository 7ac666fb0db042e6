import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watch: shutdown and progress", .timeLimit(.minutes(5)))
struct WatchShutdownTests {
    @Test("endWatches ends every stream with a shutdown event at the current revision, after what was queued")
    func endWatches() async throws {
        try await withStore(makeStore()) { store in
            var reader = WatchReader(store.watch(WatchRequest(keys: ["k"])))
            var idle = WatchReader(store.watch(WatchRequest(keys: ["nobody.writes.this"])))
            try await store.set("k", to: 1)
            try await store.set("k", to: 2)
            try await store.set("other", to: 3)
            store.endWatches()

            let (events, error) = await reader.rest()
            #expect(error == nil)
            #expect(events.map(\.summary) == ["1 set k@/=1", "2 set k@/=2", "3 shutdown"])
            let (idleEvents, idleError) = await idle.rest()
            #expect(idleError == nil)
            #expect(idleEvents == [ChangeEvent(revision: 3, kind: .shutdown)])
        }
    }

    @Test("A watcher waiting for its next event gets the shutdown event")
    func waitingWatcher() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            let stream = store.watch(WatchRequest(keys: ["k"]))
            let waiting = Task {
                var reader = WatchReader(stream)
                return await reader.rest()
            }
            // Whether the task is already waiting or not, it sees the shutdown event, then the end.
            store.endWatches()
            let (events, error) = await waiting.value
            #expect(error == nil)
            #expect(events == [ChangeEvent(revision: 1, kind: .shutdown)])
        }
    }

    @Test("After endWatches, new watches are refused with shutting_down; reads and writes go on")
    func afterEnd() async throws {
        try await withStore(makeStore()) { store in
            store.endWatches()
            var watch = WatchReader(store.watch(WatchRequest()))
            let (events, error) = await watch.rest()
            #expect(events.isEmpty)
            #expect((error as? PrefsError)?.code == .shuttingDown)
            try await store.set("k", to: 1)
            #expect(try await store.resolve("k").value == 1)
        }
    }

    @Test("close ends the streams with shutdown too")
    func close() async throws {
        let store = try makeStore()
        var watch = WatchReader(store.watch(WatchRequest(keys: ["k"])))
        try await store.set("k", to: 1)
        await store.close()
        let (events, error) = await watch.rest()
        #expect(error == nil)
        #expect(events.map(\.kind) == [.set, .shutdown])
        #expect(events.last?.revision == 1)
    }

    @Test("A quiet watcher gets progress events carrying the current revision")
    func progress() async throws {
        try await withStore(makeStore { $0.progressInterval = .milliseconds(20) }) { store in
            try await store.set("k", to: 1)
            try await store.set("k", to: 2)
            var watch = WatchReader(store.watch(WatchRequest(keys: ["quiet"])))
            let event = try #require(try await watch.next())
            #expect(event.kind == .progress)
            #expect(event.revision == 2)
            #expect(event.key == nil)
            // Progress follows the store's revision even when the changes are not this watcher's.
            try await store.set("other", to: 3)
            while let next = try await watch.next() {
                #expect(next.kind == .progress)
                if next.revision == 3 { break }
                #expect(next.revision == 2)
            }
        }
    }
}
