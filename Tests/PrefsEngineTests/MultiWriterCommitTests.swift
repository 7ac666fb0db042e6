@testable import PrefsEngine
import PrefsKit
import Testing

/// The group-commit writer over a database other writers share, without PostgreSQL: a batch runs
/// optimistically and is rebased past what others committed meanwhile; if they changed what it
/// read it runs again holding them off, and once more after a deadlock; then it gives up.
@Suite("The writer among other writers: rebase, conflict, and running again", .timeLimit(.minutes(5)))
struct MultiWriterCommitTests {
    @Test("A batch others committed ahead of, touching nothing it read, goes after them: its revisions move up, theirs are taken in first")
    func aBatchIsRebasedPastOthers() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("other.a", 1), ("other.b", 2)])
            let written = try await engine.set(KeyName("k"), to: 3, scope: .root, ifRevision: nil)
            #expect(written.revision == 3, "the batch's revision 1 moved past the others' 1 and 2")
            #expect(storage.attempts == [true])
            #expect(storage.commits == [.init(optimistic: true, changes: 1, shift: 2)])
            #expect(storage.storedValue("k") == StoredValue(value: 3, revision: 3))
            #expect(storage.loggedRevisions == [1, 2, 3])
            engine.cache.read { cache in
                #expect(cache.revision == 3)
                #expect(cache.keys["other.a"]?.values[.root] == StoredValue(value: 1, revision: 1))
                #expect(cache.keys["other.b"]?.values[.root] == StoredValue(value: 2, revision: 2))
                #expect(cache.keys["k"]?.values[.root] == StoredValue(value: 3, revision: 3))
            }
        }
    }

    @Test("A batch whose key another writer changed meanwhile runs again, holding the others off, on their change")
    func aConflictRunsAgainHoldingOthersOff() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("k", 1)])
            let written = try await engine.set(KeyName("k"), to: 2, scope: .root, ifRevision: nil)
            #expect(written.revision == 2)
            #expect(storage.attempts == [true, false], "optimistic first, then holding the others off")
            #expect(storage.commits == [.init(optimistic: false, changes: 1, shift: nil)])
            #expect(storage.loggedRevisions == [1, 2])
            #expect(engine.cache.read { $0.keys["k"]?.values[.root] } == StoredValue(value: 2, revision: 2))
        }
    }

    @Test("A conditional write is judged again on the change that conflicted with it: stale, and nothing is stored")
    func aConditionalWriteIsJudgedAgain() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("k", 1)])
            let error = await #expect(throws: PrefsError.self) {
                try await engine.set(KeyName("k"), to: 2, scope: .root, ifRevision: 0)
            }
            #expect(error?.code == .staleRevision)
            #expect(storage.attempts == [true, false])
            #expect(storage.loggedRevisions == [1])
            #expect(engine.cache.read { $0.keys["k"]?.values[.root] } == StoredValue(value: 1, revision: 1))
        }
    }

    @Test("A second attempt caught in a deadlock runs a third time, and commits")
    func aDeadlockRunsAThirdTime() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("k", 1)])
            storage.deadlockNextCommits(1)
            let written = try await engine.set(KeyName("k"), to: 2, scope: .root, ifRevision: nil)
            #expect(written.revision == 2)
            #expect(storage.attempts == [true, false, false])
            #expect(storage.commits == [.init(optimistic: false, changes: 1, shift: nil)])
        }
    }

    @Test("After three attempts the writer gives up: unavailable, and nothing is stored")
    func threeConflictsGiveUp() async throws {
        let storage = SharedMemoryStorage()
        try await withEngine(on: storage) { engine in
            storage.atNextOptimisticCommit(othersCommit: [("k", 1)])
            storage.deadlockNextCommits(2)
            let error = await #expect(throws: PrefsError.self) {
                try await engine.set(KeyName("k"), to: 2, scope: .root, ifRevision: nil)
            }
            #expect(error?.code == .unavailable)
            #expect(storage.attempts == [true, false, false])
            #expect(storage.commits.isEmpty)
            #expect(storage.loggedRevisions == [1])
            #expect(engine.cache.read { $0.revision } == 1, "the others' change is taken in all the same")
        }
    }
}
