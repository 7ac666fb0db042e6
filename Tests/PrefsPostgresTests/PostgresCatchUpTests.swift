import Foundation
@testable import PrefsEngine
import PrefsKit
import PostgresNIO
import PrefsPostgres
import TestHarness
import Testing

/// How a host takes in other hosts' commits while its own writer is busy: a batch works on what
/// the host has taken in, and its commit reads what others committed since — checking that none
/// of it touches what the batch read, also when the batch wrote nothing; a notification that comes
/// while a batch is under way is left to that batch, but only for a moment.
@Suite("PostgreSQL: taking in other hosts' commits while writing", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(5)))
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
                        }, context: WriteContext(), leadingHere: false
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

    @Test("A request that fails on what the host had taken in is judged again once its batch learns that another host changed it")
    func aFailureOnAStaleViewIsJudgedAgain() async throws {
        try await withPostgresDatabase { database in
            // No safety tick, and the other host's commit sends no notification: the host learns
            // of it only from its own batch.
            let storage = try await PostgresStorage(database: PostgresLocation(url: database.url), tick: .seconds(3600))
            try await withStore(PrefsEngine(storage: storage, configuration: StoreConfiguration())) { store in
                let first = try await store.set("k", to: 1)
                let second = first.revision + 1
                try await database.connection { connection, logger in
                    // Another host's commit of k = 2, as prefsd_commit writes one (a start equal to
                    // the newest revision: no notification).
                    let row = #"[{"key": "k", "scope": "/", "value": "2", "revision": \#(second)}]"#
                    let change = #"[{"revision": \#(second), "kind": "set", "key": "k", "scope": "/", "value": "2", "old_value": "1", "created_at": 0}]"#
                    try await connection.query(
                        """
                        SELECT prefsd_commit(
                            \(row)::jsonb, '[]', '[]', '[]', '[]', \(change)::jsonb, 0, \(second), \(second), '',
                            \(UUID().uuidString), '[]', '{}', 0, 0)
                        """, logger: logger)
                }
                #expect(try await store.resolve("k").value == 1, "not taken in yet")
                // Judged on the host's view alone, the revision would be stale (412).
                let written = try await store.set("k", to: 3, scope: .root, ifRevision: second)
                #expect(written.revision == second + 1)
                #expect(try await store.resolve("k").value == 3)
            }
        }
    }

    @Test("A change another host commits while a batch waits for the revision counter is checked against what the batch read")
    func aChangeCommittedWhileABatchWaitsIsChecked() async throws {
        try await withPostgresDatabase { database in
            let storage = try await PostgresStorage(database: PostgresLocation(url: database.url), tick: .seconds(3600))
            try await withStore(PrefsEngine(storage: storage, configuration: StoreConfiguration())) { store in
                let first = try await store.set("k", to: 1)
                // Judged on the host's view, k is still at `first`: the batch commits unless the
                // change that lands while it waits for the counter is checked too.
                var write: Task<WriteResult, any Error>?
                let other = try await Self.commitAsAnotherHost(database, "k", 2, notifying: false) {
                    write = Task { try await store.set("k", to: 3, scope: .root, ifRevision: first.revision) }
                    let waiting = try await Self.hostWaitsForTheCounter(database)
                    #expect(waiting, "the host's commit waits for the counter")
                }
                let outcome = try #require(await write?.result, "the write was started")
                if case .failure(let error as PrefsError) = outcome {
                    #expect(error.code == .staleRevision)
                } else {
                    Issue.record("judged on the host's view alone: \(outcome)")
                }
                let value = try await store.resolve("k")
                #expect(value.value == 2 && value.revision == other)
            }
        }
    }

    @Test("What other hosts committed before a batch took the revision counter, and while it waited for it, is taken in ahead of the batch")
    func changesBeforeAndWhileABatchWaitsAreTakenIn() async throws {
        try await withPostgresDatabase { database in
            let storage = try await PostgresStorage(database: PostgresLocation(url: database.url), tick: .seconds(3600))
            try await withStore(PrefsEngine(storage: storage, configuration: StoreConfiguration())) { store in
                let first = try await store.set("mine", to: 1)
                var events = store.watch(WatchRequest(keys: ["before", "during", "mine"], since: first.revision)).makeAsyncIterator()
                // Neither sends a notification: the host learns of them from its own batch only.
                let before = try await Self.commitAsAnotherHost(database, "before", 1, notifying: false)
                var write: Task<WriteResult, any Error>?
                let during = try await Self.commitAsAnotherHost(database, "during", 1, notifying: false) {
                    write = Task { try await store.set("mine", to: 2) }
                    let waiting = try await Self.hostWaitsForTheCounter(database)
                    #expect(waiting, "the host's commit waits for the counter")
                }
                let written = try #require(try await write?.value, "the write was started")
                #expect(written.revision == during + 1 && during == before + 1)
                #expect(try await store.resolve("before").value == 1)
                #expect(try await store.resolve("during").value == 1)
                var revisions: [Revision] = []
                while revisions.count < 3, let event = try await events.next() {
                    if !event.kind.isNotice { revisions.append(event.revision) }
                }
                #expect(revisions == [before, during, written.revision])
            }
        }
    }

    @Test("A host whose writer commits steadily stops listening and takes in others' commits with its own; once it stops, it listens again")
    func aBusyHostStopsListening() async throws {
        try await withPostgresDatabase { database in
            // No safety tick within the test: only a notification or the host's own commits bring
            // another host's commit in. The writer counts as steady if it committed within half
            // a second (5 ms by default): commits are slow on a machine busy with other tests.
            let storage = try await PostgresStorage(
                database: PostgresLocation(url: database.url), tick: .seconds(3600), steadyWriter: .milliseconds(500))
            try await withStore(PrefsEngine(storage: storage, configuration: StoreConfiguration())) { store in
                var events = store.watch(WatchRequest(keys: ["other.k"], since: 0)).makeAsyncIterator()
                let writing = Task {
                    var count: Int64 = 0
                    while !Task.isCancelled {
                        _ = try await store.set("busy.k", to: .integer(count))
                        count += 1
                    }
                }
                #expect(try await Self.listenerComes(to: "UNLISTEN", database), "stops listening while its writer commits steadily")
                let during = try await Self.commitAsAnotherHost(database, "other.k", 1)
                var event = try await events.next()
                while let notice = event, notice.kind.isNotice { event = try await events.next() }
                #expect(event?.revision == during && event?.value == 1, "taken in by the host's own commits")

                writing.cancel()
                _ = await writing.result
                #expect(try await Self.listenerComes(to: "LISTEN", database), "listens again once its writer is idle")
                let after = try await Self.commitAsAnotherHost(database, "other.k", 2)
                event = try await events.next()
                while let notice = event, notice.kind.isNotice { event = try await events.next() }
                #expect(event?.revision == after && event?.value == 2, "brought in by its notification")
            }
        }
    }

    /// Whether the host's listening connection runs a statement starting with `command`
    /// (`LISTEN`, `UNLISTEN`) within twenty seconds, as `pg_stat_activity` shows its last statement.
    private static func listenerComes(to command: String, _ database: PostgresTestDatabase) async throws -> Bool {
        try await database.connection { connection, logger in
            try await holdsWithin(.seconds(20), "the listener's last statement is \(command)") {
                let statement = try await connection.query(
                    """
                    SELECT query FROM pg_stat_activity
                    WHERE datname = \(database.name) AND application_name = 'prefsd listener' AND state = 'idle'
                    """, logger: logger
                ).collect().first?.decode(String.self)
                return statement?.hasPrefix(command + " ") == true
            }
        }
    }

    /// Whether, within twenty seconds, the host's commit waits for the revision counter that
    /// another connection holds (`pg_stat_activity`).
    private static func hostWaitsForTheCounter(_ database: PostgresTestDatabase) async throws -> Bool {
        try await database.connection { connection, logger in
            try await holdsWithin(.seconds(20), "a commit waits for the revision counter") {
                let waiting = try await connection.query(
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = \(database.name) AND wait_event_type = 'Lock' AND query LIKE 'CALL prefsd_commit_batch%'
                    """, logger: logger
                ).collect().first?.decode(Int64.self)
                return waiting == 1
            }
        }
    }

    /// Commits `key` = `value` as another host would (`prefsd_commit`, holding the revision
    /// counter from its start, and notifying unless told not to), running `meanwhile` before it
    /// commits, and returns its revision.
    private static func commitAsAnotherHost(
        _ database: PostgresTestDatabase, _ key: String, _ value: Int, notifying: Bool = true,
        meanwhile: () async throws -> Void = {}
    ) async throws -> Revision {
        try await database.connection { connection, logger in
            try await connection.query("BEGIN", logger: logger)
            let newest = try await connection.query(
                "SELECT newest_revision FROM change_log_state WHERE id = 1 FOR UPDATE", logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
            let revision = newest + 1
            let row = #"[{"key": "\#(key)", "scope": "/", "value": "\#(value)", "revision": \#(revision)}]"#
            let change = #"[{"revision": \#(revision), "kind": "set", "key": "\#(key)", "scope": "/", "value": "\#(value)", "created_at": 0}]"#
            // A start equal to the new revision sends no notification.
            let start = notifying ? newest : revision
            try await connection.query(
                """
                SELECT prefsd_commit(
                    \(row)::jsonb, '[]', '[]', '[]', '[]', \(change)::jsonb, 0, \(revision), \(start), \("other \(revision)"),
                    \(UUID().uuidString), '[]', '{}', 0, 0)
                """, logger: logger)
            try await meanwhile()
            try await connection.query("COMMIT", logger: logger)
            return revision
        }
    }
}
