import PrefsEngine
import PrefsKit
import PrefsStore
import Synchronization
import TestHarness
import Testing

/// The store's watches read as feeds (``WatchFeed``), the way the daemon's event loop reads
/// them: wake-ups, pacing, ends, and which writes reach which feed.
@Suite("Watch: feeds", .timeLimit(.minutes(5)))
struct WatchFeedTests {
    /// Counts a feed's wake-ups, and lets a test wait for the next one.
    final class WakeUps: Sendable {
        private let count = Atomic(0)
        var onReady: @Sendable () -> Void { { self.count.add(1, ordering: .sequentiallyConsistent) } }
        var value: Int { count.load(ordering: .sequentiallyConsistent) }

        /// Waits until there have been more than `seen` wake-ups.
        func after(_ seen: Int) async throws {
            try await waitUntil("a wake-up after \(seen)", interval: .milliseconds(1)) { value > seen }
        }
    }

    /// Polls until the feed waits or ends: the events, and the end if it came.
    static func drain(_ feed: any WatchFeed) -> (events: [ChangeEvent], ended: Bool) {
        var events: [ChangeEvent] = []
        while true {
            switch feed.poll() {
            case .event(let event): events.append(event)
            case .waiting: return (events, false)
            case .ended: return (events, true)
            }
        }
    }

    @Test("A feed wakes its reader once when it has something after a poll found it waiting")
    func wakesOncePerWait() async throws {
        try await withStore(makeStore()) { store in
            let wakeUps = WakeUps()
            let feed = try store.openWatchFeed(WatchRequest(keys: ["k"]), onReady: wakeUps.onReady)
            #expect(Self.drain(feed).events.isEmpty)
            try await store.set("k", to: 1)
            try await store.set("other", to: 1)
            try await store.set("k", to: 2)
            // Two events, one wake-up: the reader had not polled in between.
            #expect(wakeUps.value == 1)
            let first = Self.drain(feed)
            #expect(first.events.map(\.value) == [.integer(1), .integer(2)])
            #expect(!first.ended)
            try await store.set("k", to: 3)
            #expect(wakeUps.value == 2)
            #expect(Self.drain(feed).events.map(\.value) == [.integer(3)])
            feed.end()
            #expect(Self.drain(feed).ended)
            #expect(try await store.status().counts.watchers == 0)
        }
    }

    @Test("A feed resuming from a revision gets every change after it, at its reader's pace")
    func resumesAtTheReadersPace() async throws {
        try await withStore(makeStore { $0.watchBufferLimit = 8 }) { store in
            try await store.apply(PreferenceBatch(operations: (1...50).map { .set("k", .integer(Int64($0))) }))
            let wakeUps = WakeUps()
            let feed = try store.openWatchFeed(WatchRequest(keys: ["k"], since: 0), onReady: wakeUps.onReady)
            var events: [ChangeEvent] = []
            var seen = 0
            while events.count < 50 {
                try await wakeUps.after(seen)
                seen = wakeUps.value
                let drained = Self.drain(feed)
                #expect(!drained.ended)
                events += drained.events
            }
            #expect(events.map(\.revision) == Array(1...50))
            #expect(!events.contains { $0.kind == .overflow })
            try await store.set("k", to: 51)
            try await wakeUps.after(seen)
            #expect(Self.drain(feed).events.map(\.revision) == [51])
        }
    }

    @Test("A write reaches the feeds of its key only, however many watch it or other keys")
    func writesReachTheirKeysFeeds() async throws {
        try await withStore(makeStore()) { store in
            let sharedWakeUps = (0..<3).map { _ in WakeUps() }
            let shared = try sharedWakeUps.map { try store.openWatchFeed(WatchRequest(keys: ["shared"]), onReady: $0.onReady) }
            let alone = WakeUps()
            let aloneFeed = try store.openWatchFeed(WatchRequest(keys: ["alone"]), onReady: alone.onReady)
            for feed in shared + [aloneFeed] { _ = Self.drain(feed) }

            try await store.set("shared", to: 1)
            #expect(sharedWakeUps.map(\.value) == [1, 1, 1])
            #expect(alone.value == 0)
            // Two of three feeds of the key end (a last wake-up each, for the end); the last
            // still gets its changes.
            shared[0].end()
            shared[1].end()
            for feed in shared { _ = Self.drain(feed) }
            #expect(sharedWakeUps.map(\.value) == [2, 2, 1])
            try await store.set("shared", to: 2)
            #expect(sharedWakeUps.map(\.value) == [2, 2, 2])
            #expect(Self.drain(shared[2]).events.map(\.value) == [.integer(2)])
            // And a feed opened again on the key joins it.
            let again = WakeUps()
            let reopened = try store.openWatchFeed(WatchRequest(keys: ["shared"]), onReady: again.onReady)
            _ = Self.drain(reopened)
            try await store.set("alone", to: 1)
            try await store.set("shared", to: 3)
            #expect(alone.value == 1)
            #expect(again.value == 1)
            #expect(Self.drain(reopened).events.map(\.value) == [.integer(3)])
            #expect(try await store.status().counts.watchers == 3)
        }
    }

    @Test("At shutdown a feed gives what it holds, then shutdown, then its end")
    func endsAtShutdown() async throws {
        try await withStore(makeStore()) { store in
            let wakeUps = WakeUps()
            let feed = try store.openWatchFeed(WatchRequest(keys: ["k"]), onReady: wakeUps.onReady)
            try await store.set("k", to: 1)
            store.endWatches()
            #expect(wakeUps.value >= 1)
            let rest = Self.drain(feed)
            #expect(rest.events.map(\.kind) == [.set, .shutdown])
            #expect(rest.ended)
        }
    }
}

extension EmbeddedStore {
    /// A feed of `request` that calls `onReady` when it has something after a poll found it
    /// waiting.
    fileprivate func openWatchFeed(_ request: WatchRequest, onReady: @escaping @Sendable () -> Void) throws -> any WatchFeed {
        let feed = try openWatchFeed(request)
        feed.wakeWhenReady(onReady)
        return feed
    }
}
