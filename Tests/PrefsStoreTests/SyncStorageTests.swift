import Foundation
import PrefsEngine
import PrefsKit
@testable import PrefsStore
import Testing

/// Sync's rows in a SQLite file, written through the writer's connection as the engine writes
/// them and read back as it reads them: a device's sequence, the conflicts resolved, the change
/// log's stamps, and a replica's record, outbox and bases — also after the store is opened again.
@Suite("Store: sync's rows")
struct SyncStorageTests {
    /// A storage on `folder`'s database, closed after `body`.
    static func withStorage<T>(_ folder: URL, _ body: (SQLiteStorage) async throws -> T) async throws -> T {
        let storage = try SQLiteStorage(path: folder.appending(path: "prefs.sqlite").path, durability: StoreConfiguration().durability)
        defer { storage.close() }
        return try await body(storage)
    }

    /// Runs `body` in one write transaction, committed if it returns and rolled back if it throws.
    @discardableResult
    static func transaction<T>(_ storage: SQLiteStorage, _ body: (any WriteConnection) throws -> T) throws -> T {
        try storage.withWriter { connection in
            guard case .exclusive(let transactions) = connection.transactions else {
                throw PrefsError(.internal, "SQLite's transactions are exclusive")
            }
            _ = try transactions.begin(after: 0)
            do {
                let value = try body(connection)
                try transactions.commit(newestRevision: 0)
                return value
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

    @Test("A device's sequence is 0 until one is stored, and what a rolled-back batch stored is not kept")
    func appliedSequence() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        try await Self.withStorage(folder) { storage in
            #expect(try Self.transaction(storage) { try $0.appliedSequence(ofDevice: "phone") } == 0)
            try Self.transaction(storage) { connection in
                try connection.storeAppliedSequence(5, ofDevice: "phone")
                #expect(try connection.appliedSequence(ofDevice: "phone") == 5, "as the transaction sees it")
            }
            #expect(throws: PrefsError.self) {
                try Self.transaction(storage) { connection in
                    try connection.storeAppliedSequence(9, ofDevice: "phone")
                    throw PrefsError(.conflict, "rolled back")
                }
            }
            try Self.transaction(storage) { connection in
                #expect(try connection.appliedSequence(ofDevice: "phone") == 5)
                #expect(try connection.appliedSequence(ofDevice: "laptop") == 0)
                try connection.storeAppliedSequence(7, ofDevice: "phone")
            }
        }
        try await Self.withStorage(folder) { storage in
            let sequence = try Self.transaction(storage) { try $0.appliedSequence(ofDevice: "phone") }
            #expect(sequence == 7, "after the store is opened again")
        }
    }

    @Test("The replica's record, outbox and bases come back in the snapshot, also after the store is opened again")
    func replicaRoundTrip() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
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
        try await Self.withStorage(folder) { storage in
            let fresh = try storage.loadSnapshot().replica
            #expect(fresh.record == nil && fresh.outbox.isEmpty && fresh.bases.isEmpty, "a store that never synced")
            try Self.transaction(storage) { connection in
                try connection.storeReplicaRecord(ReplicaRecord(upstream: "https://prefs.example/"))
                for mutation in outbox.reversed() { try connection.appendOutbox(mutation) }
                try connection.storeSyncBase(SyncBase(revision: 40, value: "public"), for: visibility)
                try connection.storeSyncBase(SyncBase(revision: 7, value: ["a"]), for: tags)
                try connection.storeSyncBase(SyncBase(revision: 9, value: 1), for: gone)
            }
            try Self.transaction(storage) { connection in
                try connection.storeReplicaRecord(record)
                try connection.appendOutbox(
                    SyncRequest.Mutation(seq: 4, key: "x", scope: "/", value: 1, base: 0, stamp: SyncStamp(milliseconds: 12, counter: 0, device: "")))
                try connection.deleteOutbox(sequences: [4, 99])
                try connection.storeSyncBase(SyncBase(revision: 41, value: nil), for: visibility)
                try connection.storeSyncBase(nil, for: gone)
            }
        }
        try await Self.withStorage(folder) { storage in
            let replica = try storage.loadSnapshot().replica
            #expect(replica.record == record)
            #expect(replica.outbox == outbox, "in sequence order")
            #expect(replica.bases == [visibility: SyncBase(revision: 41, value: nil), tags: SyncBase(revision: 7, value: ["a"])])
        }
    }

    @Test("Conflicts are listed by subtree, key, revision and time, oldest or newest first, with every side as stored")
    func conflictsAreListed() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
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
            conflict(9, "compose.visibility", "/accounts/alice-b", time: 400),
            conflict(11, "compose.visibility", "/", time: 500),
        ]
        try await Self.withStorage(folder) { storage in
            try Self.transaction(storage) { connection in
                for conflict in conflicts.shuffled() { try connection.insertConflict(conflict) }
            }
            func revisions(_ query: ConflictQuery) async throws -> [Revision] {
                try await storage.conflicts(query).map(\.revision)
            }
            #expect(try await storage.conflicts(ConflictQuery()) == conflicts, "every side read back as written")
            #expect(try await revisions(ConflictQuery(subtree: "/accounts/alice")) == [3, 5, 7], "not the sibling alice-b")
            #expect(try await revisions(ConflictQuery(subtree: .root)) == [3, 5, 7, 9, 11])
            #expect(try await revisions(ConflictQuery(key: "compose.visibility")) == [3, 5, 9, 11])
            #expect(try await revisions(ConflictQuery(subtree: "/accounts/alice", key: "compose.visibility")) == [3, 5])
            #expect(try await revisions(ConflictQuery(after: 5)) == [7, 9, 11])
            #expect(try await revisions(ConflictQuery(from: 300)) == [7, 9, 11])
            #expect(try await revisions(ConflictQuery(newestFirst: true)) == [11, 9, 7, 5, 3])
            #expect(try await revisions(ConflictQuery(subtree: "/accounts", after: 3, limit: 2, newestFirst: true)) == [9, 7])
            #expect(try await revisions(ConflictQuery(limit: 0)) == [])
        }
    }

    @Test("lastChange finds the newest set or reset of the entry after a revision, with its stamp, as the transaction sees the log")
    func lastChangeFindsAResetAfterASet() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        try await Self.withStorage(folder) { storage in
            try Self.transaction(storage) { connection in
                try connection.appendChange(Self.change(1, .set, scope: "/a", value: 1))
                try connection.appendChange(Self.change(2, .reset, scope: "/a", stamp: Self.phone))
                try connection.appendChange(Self.change(3, .set, scope: "/a/b", value: 2))
                try connection.appendChange(Self.change(4, .set, key: "other", scope: "/a", value: 3))
                try connection.appendChange(Self.change(5, .lock, scope: "/a"))
                try connection.appendChange(Self.change(6, .conflict, scope: "/a", value: ["revision": 6]))
            }
            try Self.transaction(storage) { connection in
                let last = try #require(try connection.lastChange(of: "k", at: "/a", after: 0))
                #expect(last == Self.change(2, .reset, scope: "/a", stamp: Self.phone))
                #expect(try connection.lastChange(of: "k", at: "/a", after: 2) == nil, "a lock and a conflict are neither")
                #expect(try connection.lastChange(of: "k", at: "/", after: 0) == nil)
                try connection.appendChange(Self.change(7, .set, scope: "/a", value: 4, stamp: Self.laptop))
                #expect(try connection.lastChange(of: "k", at: "/a", after: 2)?.stamp == Self.laptop, "written in this transaction")
            }
        }
    }

    @Test("Stamps are read back with the log's rows, and nil for changes made here")
    func stampsAreReadBack() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let changes = [
            Self.change(1, .set, value: 1, stamp: Self.phone), Self.change(2, .set, value: 2),
            Self.change(3, .reset, stamp: SyncStamp(milliseconds: 5, counter: 0, device: "")),
        ]
        try await Self.withStorage(folder) { storage in
            try Self.transaction(storage) { connection in
                for change in changes { try connection.appendChange(change) }
            }
            #expect(try await storage.changeLog(matching: ChangeLogFilter(), limit: 10).changes == changes)
            #expect(try await storage.changeLog(matching: ChangeLogFilter(newestFirst: true), limit: 10).changes.map(\.stamp) == changes.reversed().map(\.stamp))
            #expect(try await storage.changeLog(after: 0, through: 3, limit: 10).changes == changes)
        }
    }

    @Test("A device's reach at a scope selects changes made at it, below it, above it, and schemas — not siblings, nor drafts")
    func reachAndKinds() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let changes = [
            Self.change(1, .set, scope: "/accounts/alice", value: 1),  // at
            Self.change(2, .set, scope: "/accounts/alice/phone", value: 2),  // below
            Self.change(3, .set, scope: "/", value: 3),  // above
            Self.change(4, .reset, scope: "/accounts"),  // above
            Self.change(5, .schema, scope: nil, value: ["type": "integer"]),  // a schema
            Self.change(6, .set, scope: "/accounts/bob", value: 4),  // a sibling
            Self.change(7, .set, scope: "/accounts/alice-b", value: 5),  // a sibling sorting close by
            Self.change(8, .set, scope: "/accounts/alice0", value: 6),  // and one sorting right after the subtree
            Self.change(9, .draftCreated, key: nil, scope: nil, draft: "d1"),  // a draft
            Self.change(10, .lock, scope: "/accounts/alice/phone"),  // below
            Self.change(11, .tokenCreated, key: nil, scope: "/accounts/alice", value: ["name": "phone"]),  // not a kind asked for
            Self.change(12, .conflict, scope: "/accounts", value: ["revision": 12]),  // above
        ]
        let kinds: [ChangeEvent.Kind] = [.set, .reset, .lock, .unlock, .schema, .conflict]
        try await Self.withStorage(folder) { storage in
            try Self.transaction(storage) { connection in
                for change in changes { try connection.appendChange(change) }
            }
            func revisions(_ filter: ChangeLogFilter) async throws -> [Revision] {
                try await storage.changeLog(matching: filter, limit: 100).changes.map(\.event.revision)
            }
            #expect(try await revisions(ChangeLogFilter(reach: "/accounts/alice", kinds: kinds)) == [1, 2, 3, 4, 5, 10, 12])
            #expect(try await revisions(ChangeLogFilter(reach: "/accounts/alice/phone", kinds: kinds)) == [1, 2, 3, 4, 5, 10, 12])
            #expect(try await revisions(ChangeLogFilter(reach: .root, kinds: kinds)) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12])
            #expect(
                try await revisions(ChangeLogFilter(reach: "/accounts/alice", kinds: kinds, after: 3, newestFirst: true)) == [12, 10, 5, 4])
            #expect(try await revisions(ChangeLogFilter(kinds: [.reset, .conflict])) == [4, 12])
        }
    }
}
