import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@Suite("Watch: resume with since", .timeLimit(.minutes(5)))
struct WatchResumeTests {
    @Test("since replays exactly the missed changes, then goes live, with no duplicates")
    func replayThenLive() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("a", to: 1)  // 1
            try await store.set("b", to: 1)  // 2
            try await store.set("a", to: 2, scope: "/x")  // 3
            try await store.set("b", to: 2)  // 4
            try await store.reset("a", scope: "/x", recursive: false)  // 5

            var watch = WatchReader(store.watch(WatchRequest(keys: ["a"], since: 1)))
            // Written before the watcher reads anything: it is live, not history, and must come once.
            try await store.set("a", to: 3)  // 6
            try await store.set("b", to: 3)  // 7
            try await store.set("a", to: 4)  // 8
            let first = try await watch.through(revision: 8)
            #expect(first.map(\.summary) == ["3 set a@/x=2", "5 reset a@/x", "6 set a@/=3", "8 set a@/=4"])
            // And later changes keep coming.
            try await store.set("a", to: 5)  // 9
            #expect(try await watch.next()?.summary == "9 set a@/=5")
        }
    }

    @Test("since 0 replays everything; since the current revision replays nothing; since beyond it is refused")
    func bounds() async throws {
        try await withStore(makeStore()) { store in
            for value in 1...5 { try await store.set("k", to: .integer(Int64(value))) }
            var all = WatchReader(store.watch(WatchRequest(since: 0)))
            var none = WatchReader(store.watch(WatchRequest(since: 5)))
            for since: Revision in [6, 100] {
                let ahead = #expect(throws: PrefsError.self) { try store.openWatchFeed(WatchRequest(since: since)) }
                #expect(ahead?.code == .invalidRequest)
                #expect(ahead?.message.contains("Revision \(since) is ahead of the store, whose newest revision is 5") == true)
                var stream = WatchReader(store.watch(WatchRequest(since: since)))
                let (events, error) = await stream.rest()
                #expect(events.isEmpty)
                #expect((error as? PrefsError)?.code == .invalidRequest)
            }
            try await store.set("k", to: 6)
            #expect(try await all.take(6).map(\.revision) == [1, 2, 3, 4, 5, 6])
            #expect(try await none.next()?.revision == 6)
        }
    }

    @Test("Writes racing with the replay are delivered exactly once, in order")
    func racingWrites() async throws {
        // Replay pauses while 32 events wait; the 10 live ones then fit beside them.
        try await withStore(makeStore { $0.watchBufferLimit = 64 }) { store in
            try await store.apply(PreferenceBatch(operations: (1...300).map { .set("k", .integer(Int64($0))) }))
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 100)))
            // Interleave live writes with reading the replay, which goes at the watcher's pace.
            var events: [ChangeEvent] = []
            for value in 301...310 {
                try await store.set("k", to: .integer(Int64(value)))
                events += try await watch.take(5)
            }
            events += try await watch.through(revision: 310)
            #expect(events.map(\.revision) == Array(101...310))
            #expect(events.map(\.value) == (101...310).map { .integer(Int64($0)) })
            #expect(!events.contains { $0.kind == .overflow })
        }
    }

    @Test("A scoped watch with since replays only the effective changes at its scope, then goes live")
    func scopedReplay() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)  // 1: → 1
            try await store.set("k", to: 2, scope: "/a")  // 2: → 2
            try await store.set("k", to: 3)  // 3: hidden
            try await store.set("j", to: 0, scope: "/a")  // 4: other key
            try await store.reset("k", scope: "/a", recursive: false)  // 5: → 3
            try await store.set("k", to: 7, scope: "/b")  // 6: elsewhere

            var fromStart = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/a/x", since: 0)))
            var fromTwo = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/a/x", since: 2)))
            var fromOne = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/a/x", since: 1)))
            try await store.set("k", to: 3, scope: "/a")  // 7: same value: nothing
            try await store.set("k", to: 4, scope: "/a")  // 8: → 4

            #expect(
                try await fromStart.through(revision: 8).map(\.summary) == [
                    "1 set k@/a/x=1 (scope:/)", "2 set k@/a/x=2 (scope:/a)", "5 reset k@/a/x=3 (scope:/)", "8 set k@/a/x=4 (scope:/a)",
                ])
            #expect(try await fromTwo.through(revision: 8).map(\.summary) == ["5 reset k@/a/x=3 (scope:/)", "8 set k@/a/x=4 (scope:/a)"])
            #expect(
                try await fromOne.through(revision: 8).map(\.summary) == [
                    "2 set k@/a/x=2 (scope:/a)", "5 reset k@/a/x=3 (scope:/)", "8 set k@/a/x=4 (scope:/a)",
                ])
        }
    }

    @Test(
        "A scoped replay rebuilds past states across schemas, locks and unlocks",
        arguments: [0, 1, 3, 5, 7, 8, 9] as [Revision]
    )
    func scopedReplayEveryKind(since: Revision) async throws {
        try await withStore(makeStore()) { store in
            try await store.register(schemas: ["k": PreferenceSchema(type: .int, defaultValue: 10)])  // 1: → 10
            try await store.set("k", to: 1)  // 2: → 1
            try await store.set("k", to: 2, scope: "/s")  // 3: → 2
            try await store.lock("k", scope: .root)  // 4: → 1
            try await store.set("k", to: 5)  // 5: → 5
            try await store.unlock("k", scope: .root)  // 6: → 2
            try await store.reset("k", scope: .root, recursive: true)  // 7 (/: no change at /s), 8 (/s: → 10)
            try await store.register(schemas: ["k": PreferenceSchema(type: .int, defaultValue: 20)])  // 9: → 20

            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/s", since: since)))
            try await store.set("k", to: 30, scope: "/s")  // 10: → 30, live
            let history = [
                "1 schema k@/s=10 (default)", "2 set k@/s=1 (scope:/)", "3 set k@/s=2 (scope:/s)", "4 lock k@/s=1 (lock:/)",
                "5 set k@/s=5 (lock:/)", "6 unlock k@/s=2 (scope:/s)", "8 reset k@/s=10 (default)", "9 schema k@/s=20 (default)",
            ]
            let replayed = history.filter { Revision($0.prefix { $0 != " " })! > since }
            let events = try await watch.through(revision: 10)
            #expect(events.map(\.summary) == replayed + ["10 set k@/s=30 (scope:/s)"])
        }
    }

    @Test("since older than the retained log ends the stream with compacted and the oldest revision")
    func compacted() async throws {
        try await withStore(makeStore { $0.retainChanges = 5 }) { store in
            for value in 1...20 { try await store.set("k", to: .integer(Int64(value))) }
            #expect(try await store.status().oldestRevision == 16)

            for request in [WatchRequest(keys: ["k"], since: 14), WatchRequest(since: 0), WatchRequest(keys: ["k"], scope: "/s", since: 3)] {
                var watch = WatchReader(store.watch(request))
                let (events, error) = await watch.rest()
                #expect(events.isEmpty)
                let prefsError = try #require(error as? PrefsError)
                #expect(prefsError.code == .compacted)
                #expect(prefsError.oldestRevision == 16)
                #expect(prefsError.message.contains("16"))
            }

            // The oldest resumable point: one before the oldest kept revision.
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 15)))
            #expect(try await watch.take(5).map(\.revision) == [16, 17, 18, 19, 20])
            var scoped = WatchReader(store.watch(WatchRequest(keys: ["k"], scope: "/s", since: 15)))
            // Read the replay before writing again: the next write compacts revision 16 away, and a
            // replay that had not read it yet would rightly end with compacted.
            let replayed = try await scoped.take(5)
            try await store.set("k", to: 21)
            let all = replayed + (try await scoped.through(revision: 21))
            #expect(all.map(\.summary) == (16...21).map { "\($0) set k@/s=\($0) (scope:/)" })
            #expect(try await watch.next()?.revision == 21)
        }
    }

    @Test("Compaction keeps the newest retainChanges, across a batch too")
    func compactionWindow() async throws {
        try await withStore(makeStore { $0.retainChanges = 10 }) { store in
            try await store.apply(PreferenceBatch(operations: (1...25).map { .set("k\($0)", 1) }))
            #expect(try await store.status().oldestRevision == 16)
            var watch = WatchReader(store.watch(WatchRequest(since: 15)))
            #expect(try await watch.take(10).map(\.revision) == Array(16...25))
        }
    }

    @Test("A scoped replay of a key that has since disappeared entirely")
    func scopedReplayOfForgottenKey() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("gone", to: 1)  // 1
            try await store.set("gone", to: 2, scope: "/s")  // 2
            try await store.reset("gone", scope: .root, recursive: true)  // 3 (/: hidden), 4 (/s: → nothing)
            var watch = WatchReader(store.watch(WatchRequest(keys: ["gone"], scope: "/s", since: 0)))
            try await store.set("gone", to: 5)  // 5
            #expect(
                try await watch.through(revision: 5).map(\.summary) == [
                    "1 set gone@/s=1 (scope:/)", "2 set gone@/s=2 (scope:/s)", "4 reset gone@/s (none)", "5 set gone@/s=5 (scope:/)",
                ])
        }
    }

    @Test("A replay that outlives the retained log ends with compacted rather than skipping revisions")
    func noSilentGapWhenCompactedDuringReplay() async throws {
        try await withStore(
            makeStore {
                $0.retainChanges = 1001
                $0.watchBufferLimit = 8
            }
        ) { store in
            try await store.apply(PreferenceBatch(operations: (1...1002).map { .set("k", .integer(Int64($0))) }))
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 0)))
            // Once the first event is here, the replay holds its first page (1...1000) in memory.
            let first = try await watch.take(1)
            #expect(first.map(\.revision) == [1])
            // These compact revision 1001 away before the replay has reached it (1002 stays: it set
            // the value stored now). (Another key: live changes the watch selects would be held for
            // it, and overflow its small buffer first.)
            try await store.apply(PreferenceBatch(operations: (1003...2004).map { .set("other", .integer(Int64($0))) }))
            #expect(try await store.status().oldestRevision == 1004)

            let (rest, error) = await watch.rest()
            #expect((error as? PrefsError)?.code == .compacted, "a change of k was dropped: 1001")
            let changes = (first + rest).filter { !$0.kind.isNotice }
            let gaps = zip(changes, changes.dropFirst()).filter { $1.revision != $0.revision + 1 }.map { "\($0.revision)→\($1.revision)" }
            #expect(changes.first?.revision == 1)
            #expect(changes.last?.revision == 1000)
            #expect(gaps.isEmpty, "gaps in the revisions delivered")
        }
    }

    @Test("A replay whose log is compacted as it reads goes on when compaction dropped none of the changes it follows")
    func replayGoesOnWhenNothingItFollowsWasDropped() async throws {
        try await withStore(
            makeStore {
                $0.retainChanges = 1001
                $0.watchBufferLimit = 8
            }
        ) { store in
            try await store.apply(PreferenceBatch(operations: (1...1001).map { .set("k", .integer(Int64($0))) }))
            var watch = WatchReader(store.watch(WatchRequest(keys: ["k"], since: 0)))
            let first = try await watch.take(1)
            #expect(first.map(\.revision) == [1])
            // These compact every change of k away before the replay has reached 1001 — but 1001,
            // which set the value stored now, and which the replay has not read yet.
            try await store.apply(PreferenceBatch(operations: (1002...2002).map { .set("other", .integer(Int64($0))) }))
            #expect(try await store.status().oldestRevision == 1002)
            let rest = try await watch.through(revision: 1001)
            #expect((first + rest).filter { !$0.kind.isNotice }.map(\.revision) == Array(1...1001))
            try await store.set("k", to: 0)
            #expect(try await watch.next()?.revision == 2003, "and goes live")
        }
    }
}
