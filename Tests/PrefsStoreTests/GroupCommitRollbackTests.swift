import Foundation
import GRDB
@testable import PrefsEngine
import PrefsKit
import Synchronization
@testable import PrefsStore
import TestHarness
import Testing

/// The group commit's own transaction: a lone request that fails leaves nothing; one that fails
/// in a batch leaves the others' changes as they were, whether it failed before changing
/// anything or after changing rows (the batch then runs again, each request in a savepoint);
/// and once SQLite has rolled a batch's transaction back by itself (as it may after
/// `SQLITE_FULL` or `SQLITE_IOERR`), no later request of the batch runs outside it.
@Suite("Store: group commit rollbacks", .timeLimit(.minutes(5)))
struct GroupCommitRollbackTests {
    struct Refused: Error {}

    @Test func aLoneRequestThatFailsMidwayLeavesNothing() async throws {
        try await withStore(makeStore()) { store in
            await #expect(throws: Refused.self) {
                try await store.write(WriteContext()) { context in
                    _ = try context.setValue(try KeyName("lone.a"), to: 1, scope: .root)
                    throw Refused()
                }
            }
            #expect(try await store.resolve("lone.a").source == .none)
            #expect(try await store.set("lone.b", to: 2).revision == 1)
            let stored = try await sqlite3(store.path, "SELECT count(*) FROM preference WHERE key = 'lone.a'; SELECT max(revision) FROM change")
            #expect(stored.split(separator: "\n") == ["0", "1"])
        }
    }

    /// Queues `work` with the writer at once, and returns what waits for its outcome.
    static func queue(_ work: @escaping @Sendable (WriteBatch) throws -> Void, on store: EmbeddedStore) -> Task<Void, any Error> {
        let (outcome, report) = AsyncStream<Result<Void, any Error>>.makeStream()
        store.writer.submit(work, context: WriteContext(), leadingHere: false) { result in
            report.yield(result)
            report.finish()
        }
        return Task {
            for await result in outcome { try result.get() }
        }
    }

    /// Holds the writer with a request of its own until `release` is called: what is queued
    /// meanwhile is one batch. `holding` waits for the held request.
    static func holdWriter(of store: EmbeddedStore) async -> (holding: Task<Void, any Error>, release: @Sendable () -> Void) {
        let (started, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let holding = Self.queue({ _ in
            started.signal()
            release.wait()
        }, on: store)
        await withCheckedContinuation { resumed in DispatchQueue.global().async { started.wait(); resumed.resume() } }
        return (holding, { release.signal() })
    }

    /// A request of a batch fails — before changing anything (a refusal), or after changing rows,
    /// which the batch undoes by running again with a savepoint for each request.
    @Test(arguments: [false, true])
    func aRequestThatFailsInABatchLeavesTheOthersChangesAsTheyWere(failsAfterWriting: Bool) async throws {
        try await withStore(makeStore()) { store in
            let (holding, release) = await Self.holdWriter(of: store)
            let firstRuns = Mutex(0)
            let first = Self.queue({ context in
                firstRuns.withLock { $0 += 1 }
                _ = try context.setValue(try KeyName("mixed.a"), to: 1, scope: .root)
            }, on: store)
            // Changes a key the batch changed already, and one it had not, then fails.
            let failing = Self.queue({ context in
                if failsAfterWriting {
                    _ = try context.setValue(try KeyName("mixed.a"), to: 2, scope: .root)
                    _ = try context.setValue(try KeyName("mixed.b"), to: 2, scope: .root)
                }
                throw Refused()
            }, on: store)
            // What the batch shows the request after the failed one.
            let seen = Mutex<(a: JSONValue?, b: KeyState?)>((nil, nil))
            let last = Self.queue({ context in
                seen.withLock { $0 = (context.state(of: "mixed.a")?.values[.root]?.value, context.state(of: "mixed.b")) }
                _ = try context.setValue(try KeyName("mixed.c"), to: 3, scope: .root)
            }, on: store)
            release()
            try await holding.value
            try await first.value
            await #expect(throws: Refused.self) { try await failing.value }
            try await last.value
            #expect(firstRuns.withLock { $0 } == (failsAfterWriting ? 2 : 1), "the batch runs again only to undo rows")
            #expect(seen.withLock { $0.a } == 1)
            #expect(seen.withLock { $0.b } == nil)
            #expect(try await store.resolve("mixed.a").value == 1)
            #expect(try await store.resolve("mixed.b").source == .none)
            #expect(try await store.resolve("mixed.c").value == 3)
            #expect(try await store.status().revision == 2)
            let logged = try await sqlite3(store.path, "SELECT group_concat(key) FROM (SELECT key FROM change ORDER BY revision)")
            #expect(logged == "mixed.a,mixed.c")
        }
    }

    @Test func requestsAfterSQLiteRolledTheBatchBackDoNotRunOutsideIt() async throws {
        try await withStore(makeStore()) { store in
            // The writer is held until the next three have queued: they are one batch.
            let (holding, release) = await Self.holdWriter(of: store)
            let first = Self.queue({ context in
                _ = try context.setValue(try KeyName("batch.a"), to: 1, scope: .root)
                // What SQLite does by itself after some errors: the whole transaction is gone.
                try (context.connection as! SQLiteWriteConnection).db.execute(sql: "ROLLBACK")
                throw DatabaseError(resultCode: .SQLITE_FULL)
            }, on: store)
            let later = (0..<2).map { index in
                Self.queue({ context in _ = try context.setValue(try KeyName("batch.later\(index)"), to: 2, scope: .root) }, on: store)
            }
            release()
            try await holding.value
            let error = await #expect(throws: PrefsError.self) { try await first.value }
            #expect(error?.code == .storageFull)
            for request in later {
                await #expect(throws: (any Error).self, "a request after the rollback must not commit on its own") {
                    try await request.value
                }
            }
            #expect(try await store.status().revision == 0)
            let stored = try await sqlite3(store.path, "SELECT count(*) FROM preference; SELECT count(*) FROM change")
            #expect(stored.split(separator: "\n") == ["0", "0"])
            // The writer goes on.
            #expect(try await store.set("after.batch", to: 3).revision == 1)
        }
    }
}
