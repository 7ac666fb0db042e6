import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit
import PrefsPostgres
import TestHarness
import Testing

/// Sync's rows on PostgreSQL, written through hosts' writer connections as the engine writes
/// them: a device's sequence, taken in by one host at a time; the conflicts resolved, which move
/// with a batch committed after other hosts' changes exactly as its change rows do; the change
/// log's stamps; a device's reach; and a replica's record, outbox and bases.
@Suite("PostgreSQL: sync's rows", .enabled(if: PostgresTestDatabase.isEnabled), .timeLimit(.minutes(5)))
struct PostgresSyncStorageTests {
    /// A host's storage on `database`, with no safety tick, closed after `body` (on a thread of
    /// its own: closing waits for the writer).
    static func withStorage<T>(
        _ database: PostgresTestDatabase, isolation: isolated (any Actor)? = #isolation, _ body: (PostgresStorage) async throws -> T
    ) async throws -> T {
        let storage = try await PostgresStorage(database: PostgresLocation(url: database.url), tick: .seconds(3600))
        return try await withCleanup(isolation: isolation) { try await body(storage) } cleanup: {
            await onOwnThread { storage.close() }
        }
    }

    /// Runs `body` with the host's writer connection and its transactions, on the writer's thread,
    /// waited for on a thread of its own. A batch may begin in one call and commit in a later one:
    /// the connection keeps its state between them.
    static func onWriter<T: Sendable>(
        _ storage: PostgresStorage, _ body: @escaping @Sendable (any WriteConnection, any SharedTransactions) throws -> T
    ) async throws -> T {
        try await onOwnThread {
            try storage.withWriter { connection in
                guard case .shared(let transactions) = connection.transactions else {
                    throw PrefsError(.internal, "PostgreSQL's transactions are shared")
                }
                return try body(connection, transactions)
            }
        }
    }

    /// Runs `body` in one optimistic batch after `base`, committed at `newestRevision`.
    @discardableResult
    static func batch(
        _ storage: PostgresStorage, after base: Revision, newestRevision: Revision, keysRead: Set<String> = [],
        _ body: @escaping @Sendable (any WriteConnection) throws -> Void
    ) async throws -> CommitRebase? {
        try await onWriter(storage) { connection, transactions in
            _ = try transactions.begin(after: base, optimistic: true)
            do {
                try body(connection)
                return try transactions.commit(newestRevision: newestRevision, following: base, keysRead: .some(keysRead))
            } catch {
                connection.rollback()
                throw error
            }
        }
    }

    /// A change of the log, as the engine appends it.
    static func change(
        _ revision: Revision, _ kind: ChangeEvent.Kind, key: String? = "k", scope: ScopePath? = "/", value: JSONValue? = nil,
        stamp: SyncStamp? = nil, draft: String? = nil
    ) -> LoggedChange {
        LoggedChange(
            event: ChangeEvent(revision: revision, kind: kind, key: key, scope: scope, value: value, draft: draft),
            time: 1_800_000_000 + Double(revision), stamp: stamp)
    }

    static let phone = SyncStamp(milliseconds: 1_800_000_000_123, counter: 2, device: "phone")
    static let laptop = SyncStamp(milliseconds: 1_800_000_000_456, counter: 0, device: "laptop")

    @Test("The replica's record, outbox and bases come back in the snapshot, also on another host")
    func replicaRoundTrip() async throws {
        let record = ReplicaRecord(
            upstream: "https://prefs.example/", device: "phone", role: .writer, scope: "/accounts/alice", cursor: 42,
            snapshotTaken: true, clock: Self.phone, nextSequence: 4)
        let outbox = [
            SyncRequest.Mutation(
                seq: 1, key: "compose.visibility", scope: "/accounts/alice", value: "unlisted", base: 40, baseValue: "public",
                stamp: SyncStamp(milliseconds: 10, counter: 0, device: ""), author: "alice (prefsctl)", reason: "quieter"),
            SyncRequest.Mutation(
                seq: 2, key: "compose.cw", scope: "/accounts/alice", value: nil, base: 0,
                stamp: SyncStamp(milliseconds: 11, counter: 0, device: "")),
            SyncRequest.Mutation(
                seq: 3, key: "compose.tags", scope: "/", value: ["a", "b"], base: 7, baseValue: ["a"],
                stamp: SyncStamp(milliseconds: 11, counter: 1, device: ""), ifAbsent: true),
        ]
        let visibility = SyncEntry(key: "compose.visibility", scope: "/accounts/alice")
        let tags = SyncEntry(key: "compose.tags", scope: "/")
        let gone = SyncEntry(key: "compose.cw", scope: "/accounts/alice")
        try await withPostgresDatabase { database in
            try await Self.withStorage(database) { storage in
                let fresh = try await onOwnThread { try storage.loadSnapshot() }.replica
                #expect(fresh.record == nil && fresh.outbox.isEmpty && fresh.bases.isEmpty, "a database that never synced")
                try await Self.batch(storage, after: 0, newestRevision: 0) { connection in
                    try connection.storeReplicaRecord(ReplicaRecord(upstream: "https://prefs.example/"))
                    for mutation in outbox.reversed() { try connection.appendOutbox(mutation) }
                    try connection.storeSyncBase(SyncBase(revision: 40, value: "public"), for: visibility)
                    try connection.storeSyncBase(SyncBase(revision: 7, value: ["a"]), for: tags)
                    try connection.storeSyncBase(SyncBase(revision: 9, value: 1), for: gone)
                }
                // A batch rolled back keeps none of its rows.
                await #expect(throws: PrefsError.self) {
                    try await Self.batch(storage, after: 0, newestRevision: 0) { connection in
                        try connection.storeReplicaRecord(ReplicaRecord(upstream: "https://elsewhere.example/"))
                        try connection.deleteOutbox(sequences: [1, 2, 3])
                        throw PrefsError(.conflict, "rolled back")
                    }
                }
                try await Self.batch(storage, after: 0, newestRevision: 0) { connection in
                    try connection.storeReplicaRecord(record)
                    try connection.appendOutbox(
                        SyncRequest.Mutation(
                            seq: 4, key: "x", scope: "/", value: 1, base: 0, stamp: SyncStamp(milliseconds: 12, counter: 0, device: "")))
                    try connection.deleteOutbox(sequences: [4, 99])
                    try connection.deleteOutbox(sequences: [])
                    try connection.storeSyncBase(SyncBase(revision: 41, value: nil), for: visibility)
                    try connection.storeSyncBase(nil, for: gone)
                }
            }
            try await Self.withStorage(database) { storage in
                let replica = try await onOwnThread { try storage.loadSnapshot() }.replica
                #expect(replica.record == record)
                #expect(replica.outbox == outbox, "in sequence order")
                #expect(replica.bases == [visibility: SyncBase(revision: 41, value: nil), tags: SyncBase(revision: 7, value: ["a"])])
            }
        }
    }

    @Test("Two hosts taking in one device's exchange take them in one after the other: the second reads the sequence the first stored")
    func aDevicesExchangesAreTakenInOneAtATime() async throws {
        try await withPostgresDatabase { database in
            try await Self.withStorage(database) { first in
                try await Self.withStorage(database) { second in
                    let firstRead = try await Self.onWriter(first) { connection, transactions in
                        _ = try transactions.begin(after: 0, optimistic: true)
                        return try connection.appliedSequence(ofDevice: "phone")
                    }
                    #expect(firstRead == 0)
                    let taken = Task {
                        try await Self.onWriter(second) { connection, transactions in
                            _ = try transactions.begin(after: 0, optimistic: true)
                            let sequence = try connection.appliedSequence(ofDevice: "phone")
                            try connection.storeAppliedSequence(sequence + 2, ofDevice: "phone")
                            _ = try transactions.commit(newestRevision: 0, following: 0, keysRead: .some([]))
                            return sequence
                        }
                    }
                    try await waitUntil("the second host waits for the first", timeout: .seconds(20)) {
                        try await database.connection { connection, logger in
                            try await connection.query(
                                """
                                SELECT count(*) FROM pg_stat_activity
                                WHERE datname = \(database.name) AND application_name = 'prefsd writer' AND wait_event_type = 'Lock'
                                """, logger: logger
                            ).collect().first?.decode(Int64.self) == 1
                        }
                    }
                    try await Self.onWriter(first) { connection, transactions in
                        try connection.storeAppliedSequence(5, ofDevice: "phone")
                        _ = try transactions.commit(newestRevision: 0, following: 0, keysRead: .some([]))
                    }
                    #expect(try await taken.value == 5, "read once the first host's batch had committed")
                    let stored = try await Self.onWriter(first) { connection, transactions in
                        _ = try transactions.begin(after: 0, optimistic: false)
                        defer { connection.rollback() }
                        return try connection.appliedSequence(ofDevice: "phone")
                    }
                    #expect(stored == 7)
                }
            }
        }
    }

    @Test(
        "A batch committed after another host's change moves its conflict's revision with its change rows, and the revisions its sides name that it made",
        arguments: [false, true])
    func aRebasedBatchMovesItsConflict(inTransaction: Bool) async throws {
        try await withPostgresDatabase { database in
            try await Self.withStorage(database) { upstream in
                try await Self.withStorage(database) { other in
                    try await Self.batch(other, after: 0, newestRevision: 1) { connection in
                        try connection.upsertValue(key: "k", scope: .root, value: 1, revision: 1)
                        try connection.appendChange(Self.change(1, .set, value: 1))
                    }
                    // The upstream's batch works on revision 1; another host commits revision 2 before
                    // it commits — before it opens a transaction, if it opens one.
                    try await Self.onWriter(upstream) { _, transactions in _ = try transactions.begin(after: 1, optimistic: true) }
                    try await Self.batch(other, after: 1, newestRevision: 2, keysRead: ["other"]) { connection in
                        try connection.upsertValue(key: "other", scope: .root, value: 1, revision: 2)
                        try connection.appendChange(Self.change(2, .set, key: "other", value: 1))
                    }
                    let conflict = SyncConflict(
                        revision: 3, key: "k", scope: .root, rule: .init(.lww),
                        winner: .init(value: 2, device: "phone", stamp: Self.phone, revision: 2, sequence: 3),
                        losers: [.init(value: 1, revision: 1), .init(value: 3, device: "laptop", stamp: Self.laptop, sequence: 8)],
                        time: Date(timeIntervalSince1970: 1_800_000_003))
                    let (applied, ownLast, rebase) = try await Self.onWriter(upstream) { connection, transactions in
                        var applied: Int64?
                        if inTransaction {
                            applied = try connection.appliedSequence(ofDevice: "phone")
                            try connection.storeAppliedSequence(3, ofDevice: "phone")
                        }
                        try connection.upsertValue(key: "k", scope: .root, value: 2, revision: 2)
                        try connection.appendChange(Self.change(2, .set, value: 2, stamp: Self.phone))
                        let ownLast = try connection.lastChange(of: "k", at: .root, after: 1)
                        try connection.appendChange(Self.change(3, .conflict, value: ["revision": 3]))
                        try connection.insertConflict(conflict)
                        return (applied, ownLast, try transactions.commit(newestRevision: 3, following: 1, keysRead: .some(["k"])))
                    }
                    #expect(applied == (inTransaction ? 0 : nil))
                    #expect(ownLast?.event.revision == 2 && ownLast?.stamp == Self.phone, "its own, not sent yet")
                    #expect(rebase?.shift == 1)
                    #expect(rebase?.committedBefore.changes.map(\.event.key) == ["other"])

                    var moved = conflict
                    moved.revision = 4
                    moved.winner.revision = 3
                    #expect(try await upstream.conflicts(ConflictQuery()) == [moved], "the loser committed before stays at 1")
                    let log = try await upstream.changeLog(matching: ChangeLogFilter(key: "k"), limit: 10).changes
                    #expect(log.map(\.event.revision) == [1, 3, 4])
                    #expect(log.map(\.event.kind) == [.set, .set, .conflict])
                    #expect(log.map(\.stamp) == [nil, Self.phone, nil])
                    let last = try await Self.onWriter(other) { connection, transactions in
                        _ = try transactions.begin(after: 4, optimistic: true)
                        defer { connection.rollback() }
                        return try connection.lastChange(of: "k", at: .root, after: 0)
                    }
                    #expect(last?.event.revision == 3 && last?.stamp == Self.phone)
                    if inTransaction {
                        let sequence = try await Self.onWriter(other) { connection, transactions in
                            _ = try transactions.begin(after: 4, optimistic: false)
                            defer { connection.rollback() }
                            return try connection.appliedSequence(ofDevice: "phone")
                        }
                        #expect(sequence == 3)
                    }
                }
            }
        }
    }

    @Test("Conflicts are listed by subtree, key, revision and time, oldest or newest first; stamps and a device's reach select the log's rows")
    func conflictsStampsAndReach() async throws {
        func conflict(_ revision: Revision, _ key: String, _ scope: ScopePath, time: Double) -> SyncConflict {
            SyncConflict(
                revision: revision, key: key, scope: scope, rule: revision == 9 ? .refused : SyncConflict.Rule(.lww),
                winner: .init(value: .integer(revision), device: "phone", stamp: Self.phone, revision: revision - 1, sequence: 3),
                losers: [.init(value: nil, revision: 2), .init(value: ["x"], device: "laptop", stamp: Self.laptop, sequence: 8)],
                time: Date(timeIntervalSince1970: time), detail: revision == 9 ? "the key is locked at /accounts" : nil)
        }
        let conflicts = [
            conflict(3, "compose.visibility", "/accounts/alice", time: 100),
            conflict(5, "compose.visibility", "/accounts/alice/phone", time: 200),
            conflict(7, "compose.cw", "/accounts/alice", time: 300),
            conflict(9, "compose.visibility", "/accounts/alice_b", time: 400),
            conflict(11, "compose.visibility", "/", time: 500),
            conflict(13, "compose.visibility", "/accounts/aliceXb/phone", time: 600),
        ]
        let changes = [
            Self.change(1, .set, scope: "/accounts/alice", value: 1, stamp: Self.phone),  // at
            Self.change(2, .set, scope: "/accounts/alice/phone", value: 2),  // below
            Self.change(3, .set, scope: "/", value: 3, stamp: Self.laptop),  // above
            Self.change(4, .reset, scope: "/accounts"),  // above
            Self.change(5, .schema, scope: nil, value: ["type": "integer"]),  // a schema
            Self.change(6, .set, scope: "/accounts/bob", value: 4),  // a sibling
            Self.change(7, .set, scope: "/accounts/alice_b", value: 5),  // a sibling
            Self.change(8, .set, scope: "/accounts/alice0", value: 6),  // a sibling
            Self.change(9, .draftCreated, key: nil, scope: nil, draft: "d1"),  // a draft
            Self.change(10, .lock, scope: "/accounts/alice/phone"),  // below
            Self.change(11, .tokenCreated, key: nil, scope: "/accounts/alice", value: ["name": "phone"]),  // not a kind asked for
            Self.change(12, .conflict, scope: "/accounts", value: ["revision": 12]),  // above
        ]
        let kinds: [ChangeEvent.Kind] = [.set, .reset, .lock, .unlock, .schema, .conflict]
        try await withPostgresDatabase { database in
            try await Self.withStorage(database) { storage in
                // A batch that holds the others off from its start (prefsd_commit): nothing moves.
                let rebase = try await Self.onWriter(storage) { connection, transactions in
                    _ = try transactions.begin(after: 0, optimistic: false)
                    for change in changes { try connection.appendChange(change) }
                    for conflict in conflicts.shuffled() { try connection.insertConflict(conflict) }
                    return try transactions.commit(newestRevision: 12, following: 0, keysRead: .some([]))
                }
                #expect(rebase == nil)
                func revisions(_ query: ConflictQuery) async throws -> [Revision] {
                    try await storage.conflicts(query).map(\.revision)
                }
                #expect(try await storage.conflicts(ConflictQuery()) == conflicts, "every side read back as written")
                #expect(try await revisions(ConflictQuery(subtree: "/accounts/alice")) == [3, 5, 7], "not the sibling alice_b")
                #expect(try await revisions(ConflictQuery(subtree: "/accounts/alice_b")) == [9], "its `_` is no wildcard")
                #expect(try await revisions(ConflictQuery(subtree: .root)) == [3, 5, 7, 9, 11, 13])
                #expect(try await revisions(ConflictQuery(key: "compose.visibility")) == [3, 5, 9, 11, 13])
                #expect(try await revisions(ConflictQuery(subtree: "/accounts/alice", key: "compose.visibility")) == [3, 5])
                #expect(try await revisions(ConflictQuery(after: 5)) == [7, 9, 11, 13])
                #expect(try await revisions(ConflictQuery(from: 300)) == [7, 9, 11, 13])
                #expect(try await revisions(ConflictQuery(newestFirst: true)) == [13, 11, 9, 7, 5, 3])
                #expect(try await revisions(ConflictQuery(subtree: "/accounts", after: 3, limit: 2, newestFirst: true)) == [13, 9])

                #expect(try await storage.changeLog(matching: ChangeLogFilter(), limit: 100).changes == changes, "stamps read back")
                func logged(_ filter: ChangeLogFilter) async throws -> [Revision] {
                    try await storage.changeLog(matching: filter, limit: 100).changes.map(\.event.revision)
                }
                #expect(try await logged(ChangeLogFilter(reach: "/accounts/alice", kinds: kinds)) == [1, 2, 3, 4, 5, 10, 12])
                #expect(try await logged(ChangeLogFilter(reach: "/accounts/alice/phone", kinds: kinds)) == [1, 2, 3, 4, 5, 10, 12])
                #expect(try await logged(ChangeLogFilter(reach: .root, kinds: kinds)) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12])
                #expect(
                    try await logged(ChangeLogFilter(reach: "/accounts/alice", kinds: kinds, after: 3, newestFirst: true)) == [12, 10, 5, 4])
                #expect(try await logged(ChangeLogFilter(kinds: [.reset, .conflict])) == [4, 12])
            }
        }
    }
}
