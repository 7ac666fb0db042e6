@testable import PrefsEngine
import PrefsKit
import TestHarness
import Testing

/// The writer's wait for stragglers while other writers commit too: after a batch that was
/// rebased past others' commits, the next batch waits up to 500 µs to grow back to the size of
/// recent ones. The clock is moved by hand, so the window ends exactly when the test says.
@Suite("The writer's straggler wait", .timeLimit(.minutes(5)))
struct StragglerWaitTests {
    /// Commits a batch of three sets that another writer's commit goes ahead of, so that the
    /// writer's next batch waits for stragglers; returns once the writer is idle again.
    private static func commitARebasedBatchOfThree(
        _ engine: PrefsEngine<SharedMemoryStorage>, _ storage: SharedMemoryStorage
    ) async throws {
        let outcomes = Outcomes()
        storage.holdWriter()
        storage.atNextOptimisticCommit(othersCommit: [("other", 1)])
        for name in ["a", "b", "c"] { try set(name, engine, outcomes) }
        storage.releaseWriter()
        #expect(try await outcomes.revisions(3) == [2, 3, 4])
        await storage.writerTurns.reach(1)
        #expect(storage.commits == [.init(optimistic: true, changes: 3, shift: 1)])
    }

    /// Submits a set of `name` without waiting for it.
    private static func set(_ name: String, _ engine: PrefsEngine<SharedMemoryStorage>, _ outcomes: Outcomes) throws {
        engine.set(
            try KeyName(name), to: 1, scope: .root, ifRevision: nil, context: WriteContext(), committingHere: false,
            then: outcomes.report)
    }

    @Test("The next batch waits for the requests on their way back, and commits them together, without the window ending")
    func theNextBatchGathersItsStragglers() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            try await Self.commitARebasedBatchOfThree(engine, storage)
            let outcomes = Outcomes()
            let reads = clock.reads.count
            try Self.set("d", engine, outcomes)
            // Two reads: the window's start, then its end checked with one request waiting.
            await clock.reads.reach(reads + 2)
            try Self.set("e", engine, outcomes)
            try Self.set("f", engine, outcomes)
            #expect(try await outcomes.revisions(3) == [5, 6, 7])
            #expect(storage.commits.last == .init(optimistic: true, changes: 3, shift: nil))
            #expect(clock.moved == .zero, "the window never ended")
        }
    }

    @Test("A batch whose stragglers do not come commits once 500 µs have passed, not before")
    func theWindowEndsAfter500Microseconds() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            try await Self.commitARebasedBatchOfThree(engine, storage)
            let outcomes = Outcomes()
            try Self.set("d", engine, outcomes)
            await clock.reads.reach(clock.reads.count + 2)
            clock.advance(by: .microseconds(499))
            // A read after the move, then another: the writer saw 499 µs and waited on.
            await clock.reads.reach(clock.reads.count + 3)
            #expect(storage.commits.count == 1, "still waiting")
            clock.advance(by: .microseconds(1))
            #expect(try await outcomes.revisions(1) == [5])
            #expect(storage.commits.last == .init(optimistic: true, changes: 1, shift: nil))
        }
    }

    @Test("A writer whose last batch followed no other writer's commits the next at once: the clock never moves")
    func noWaitAfterABatchNoOneWentAheadOf() async throws {
        let storage = SharedMemoryStorage()
        let clock = ManualClock()
        try await withEngine(on: storage, clock: clock) { engine in
            let outcomes = Outcomes()
            storage.holdWriter()
            for name in ["a", "b", "c"] { try Self.set(name, engine, outcomes) }
            storage.releaseWriter()
            #expect(try await outcomes.revisions(3) == [1, 2, 3])
            await storage.writerTurns.reach(1)
            try Self.set("d", engine, outcomes)
            #expect(try await outcomes.revisions(1) == [4])
            #expect(storage.commits.map(\.changes) == [3, 1])
            #expect(clock.moved == .zero)
        }
    }
}
