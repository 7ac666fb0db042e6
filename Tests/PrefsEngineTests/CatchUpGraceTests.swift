@testable import PrefsEngine
import PrefsKit
import TestHarness
import Testing

/// How the engine takes in another writer's commit it is notified of: at once when its writer is
/// idle; left to a batch under way for the 5 ms grace — the batch's commit takes it in — and read
/// from the change log once the grace is over. The clock is moved by hand.
@Suite("Taking in other writers' commits: the catch-up grace", .timeLimit(.minutes(5)))
struct CatchUpGraceTests {
    @Test("With the writer idle, a notification has the change log read at once, with no grace")
    func anIdleWriterReadsAtOnce() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            storage.othersCommit([("other", 1)], notifying: true)
            await storage.changeLogReads.reach(1)
            #expect(clock.sleeps.count == 0)
            try await engine.waitForRevision(1)
            #expect(engine.cache.read { $0.keys["other"]?.values[.root] } == StoredValue(value: 1, revision: 1))
        }
    }

    @Test("A notification of a revision already taken in reads nothing and waits for nothing")
    func aRevisionTakenInNeedsNothing() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("other", 1)])
            let written = try await engine.set(KeyName("k"), to: 2, scope: .root, ifRevision: nil)
            #expect(written.revision == 2, "after the other's 1, taken in with the batch")
            engine.catchUp(toReach: 1)
            #expect(storage.changeLogReads.count == 0)
            #expect(clock.sleeps.count == 0)
        }
    }

    @Test("While a batch is under way, a notification is left to it for 5 ms; then the engine reads the change log itself")
    func aBatchUnderWayHasTheGrace() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            let outcomes = Outcomes()
            storage.holdWriter()
            engine.set(
                try KeyName("k"), to: 2, scope: .root, ifRevision: nil, context: WriteContext(), committingHere: false,
            then: outcomes.report)
            #expect(engine.writer.willTakeInCommitsSoFar)
            storage.othersCommit([("other", 1)], notifying: true)
            await clock.sleeps.reach(1)
            #expect(storage.changeLogReads.count == 0, "left to the batch")
            clock.advance(by: .microseconds(4999))
            #expect(storage.changeLogReads.count == 0, "left to the batch")
            clock.advance(by: .microseconds(1))
            await storage.changeLogReads.reach(1)
            try await engine.waitForRevision(1)
            storage.releaseWriter()
            #expect(try await outcomes.revisions(1) == [2])
        }
    }
}
