import Foundation
@testable import PrefsEngine
import PrefsKit
import PrefsPostgres
import TestHarness
import Testing

/// How a host takes in other hosts' commits while its own writer is busy: a notification that
/// comes while one of its batches is under way is left to that batch, whose commit reads what
/// others committed before it — but only for a moment.
@Suite("PostgreSQL: taking in other hosts' commits while writing", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(1)))
struct PostgresCatchUpTests {
    @Test("A notification that comes while a batch is held up does not wait for it: the host reads the change log itself")
    func aHeldUpBatchDoesNotHoldBackOthersCommits() async throws {
        try await withPostgresDatabase { database in
            // No safety tick within the test: only the notification can bring the change in.
            let storage = try await PostgresStorage(database: PostgresLocation(url: database.url), tick: .seconds(3600))
            try await withStore(PrefsEngine(storage: storage, configuration: StoreConfiguration())) { held in
                try await withStore(PostgresStore(url: database.url)) { other in
                    var events = held.watch(WatchRequest(keys: ["other.k"], since: 0)).makeAsyncIterator()
                    let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
                    let (ended, endedContinuation) = AsyncStream.makeStream(of: Bool.self)
                    let release = DispatchSemaphore(value: 0)
                    #expect(!held.writer.willTakeInCommitsSoFar, "idle")
                    held.writer.submit(
                        { (_: WriteBatch) -> Void in
                            enteredContinuation.yield()
                            _ = release.wait(timeout: .now() + 30)
                        }, leadingHere: false
                    ) { (outcome: Result<Void, any Error>) in endedContinuation.yield((try? outcome.get()) != nil) }
                    var enteredIterator = entered.makeAsyncIterator()
                    _ = await enteredIterator.next()
                    #expect(held.writer.willTakeInCommitsSoFar, "a batch under way, before its commit")

                    let written = try await other.set("other.k", to: 1)
                    var event = try await events.next()
                    while let notice = event, notice.kind.isNotice { event = try await events.next() }
                    #expect(event?.revision == written.revision && event?.value == 1, "taken in while the batch is held up")

                    release.signal()
                    var endedIterator = ended.makeAsyncIterator()
                    #expect(await endedIterator.next() == true)
                    #expect(!held.writer.willTakeInCommitsSoFar, "idle again")
                }
            }
        }
    }
}
