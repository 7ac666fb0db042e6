@testable import PrefsEngine
import Testing

/// The group-commit writer's queue as a state machine, without a storage or a thread.
@Suite("The writer's queue")
struct CommitQueueTests {
    @Test("The first request leads; those that come while a writer drains are queued for its next batch")
    func theFirstRequestLeads() {
        var queue = CommitQueue<Int>()
        #expect(queue.submit(1) == .lead)
        #expect(queue.submit(2) == .queued)
        #expect(queue.takeBatch() == [1, 2])
        #expect(queue.writer == .draining(.beforeCommit))
        queue.commitSending()
        queue.committed(rebased: false)
        queue.batchEnded()
        #expect(queue.submit(3) == .queued, "the writer still drains")
        #expect(queue.takeBatch() == [3])
        queue.batchEnded()
        #expect(queue.takeBatch() == nil)
        #expect(queue.writer == .idle)
        #expect(queue.submit(4) == .lead)
    }

    @Test("A batch under way takes in others' commits until it sends its commit; then only waiting requests do")
    func whatTakesInCommitsSoFar() {
        var queue = CommitQueue<Int>()
        #expect(!queue.willTakeInCommitsSoFar, "idle")
        _ = queue.submit(1)
        #expect(queue.willTakeInCommitsSoFar, "a request waits")
        _ = queue.takeBatch()
        #expect(queue.willTakeInCommitsSoFar, "before its commit")
        queue.commitSending()
        #expect(!queue.willTakeInCommitsSoFar, "its commit sent")
        _ = queue.submit(2)
        #expect(queue.willTakeInCommitsSoFar, "the next batch waits")
        queue.batchEnded()
        _ = queue.takeBatch()
        queue.commitSending()
        queue.batchEnded()
        #expect(queue.takeBatch() == nil)
        #expect(!queue.willTakeInCommitsSoFar, "idle again")
    }

    @Test("After a leader's batch, requests queued meanwhile are handed on; with none, the writer is idle")
    func aLeaderHandsOn() {
        var queue = CommitQueue<Int>()
        _ = queue.submit(1)
        _ = queue.takeBatch()
        _ = queue.submit(2)
        queue.batchEnded()
        let handsOn = queue.leaderCommitted()
        #expect(handsOn)
        #expect(queue.takeBatch() == [2])
        queue.batchEnded()
        let handsOnAgain = queue.leaderCommitted()
        #expect(!handsOnAgain)
        #expect(queue.writer == .idle)
    }

    @Test("Stragglers are waited for only after a rebased batch, while fewer wait than batches of late held")
    func whenToWaitForStragglers() {
        var queue = CommitQueue<Int>()
        for job in 1...3 { _ = queue.submit(job) }
        _ = queue.takeBatch()
        queue.committed(rebased: false)
        queue.batchEnded()
        _ = queue.submit(4)
        #expect(!queue.waitsForStragglers, "the last batch followed no one")
        _ = queue.takeBatch()
        queue.committed(rebased: true)
        queue.batchEnded()
        #expect(queue.recentBatchSize == 2, "three, less one, then one: the larger")
        #expect(!queue.waitsForStragglers, "no request waits")
        _ = queue.submit(5)
        #expect(queue.waitsForStragglers)
        _ = queue.submit(6)
        #expect(!queue.waitsForStragglers, "as many as of late")
    }
}
