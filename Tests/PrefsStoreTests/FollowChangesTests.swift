import PrefsEngine
import PrefsStore
import Synchronization
import TestHarness
import Testing

@testable import PrefsKit

/// What the wrappers follow their watches with (``followChanges(of:_:from:resynchronize:onInterruption:onChange:)``),
/// against a store.
@Suite("Following changes", .timeLimit(.minutes(5)))
struct FollowChangesTests {
    @Test("From a revision the store has not reached (another database's), it loads the state again and follows")
    func fromAheadResynchronizes() async throws {
        try await withStore(makeStore()) { store in
            try await store.set("k", to: 1)
            let (changes, delivered) = AsyncStream.makeStream(of: ChangeEvent.self)
            let resynchronized = Atomic<Int>(0)
            let following = Task {
                await followChanges(
                    of: store, WatchRequest(keys: ["k"]), from: 50,
                    resynchronize: {
                        resynchronized.add(1, ordering: .relaxed)
                        return store.committedRevision
                    },
                    onInterruption: { _ in }, onChange: { delivered.yield($0) })
            }
            defer { following.cancel() }
            try await waitUntil("the follower resynchronized") { resynchronized.load(ordering: .relaxed) > 0 }
            #expect(resynchronized.load(ordering: .relaxed) == 1)
            let revision = try await store.set("k", to: 2).revision
            var events = changes.makeAsyncIterator()
            #expect(await events.next()?.revision == revision)
        }
    }
}
