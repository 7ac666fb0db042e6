import PrefsEngine
import Foundation
import PrefsKit
import Testing

/// Sync's rows in the in-memory storage the engine tests share, held to what the SQL storages do:
/// a rebased batch's conflict moves with its change, a reset compaction dropped is still the
/// entry's last change, and the replica's rows come back in the snapshot.
@Suite("The in-memory storage's sync rows")
struct SharedMemorySyncTests {
    @Test("A batch rebased past other writers' changes moves its conflict, and the revisions its sides name that it made")
    func aRebasedBatchMovesItsConflict() async throws {
        let storage = SharedMemoryStorage()
        storage.othersCommit([("k", 1)])
        storage.atNextOptimisticCommit(othersCommit: [("other", 1)])
        let phone = SyncStamp(milliseconds: 5, counter: 0, device: "phone")
        let conflict = SyncConflict(
            revision: 3, key: "k", scope: .root, rule: .init(.lww), winner: .init(value: 2, device: "phone", stamp: phone, revision: 2),
            losers: [.init(value: 1, revision: 1)], time: Date(timeIntervalSince1970: 0))
        let (own, rebase) = try storage.withWriter { connection in
            guard case .shared(let transactions) = connection.transactions else { throw SharedMemoryWriteConnection.Unsupported() }
            _ = try transactions.begin(after: 1, optimistic: true)
            #expect(try connection.appliedSequence(ofDevice: "phone") == 0)
            try connection.storeAppliedSequence(4, ofDevice: "phone")
            #expect(try connection.appliedSequence(ofDevice: "phone") == 4, "as the batch sees it")
            try connection.appendChange(
                LoggedChange(event: ChangeEvent(revision: 2, kind: .set, key: "k", scope: .root, value: 2), stamp: phone))
            try connection.appendChange(LoggedChange(event: ChangeEvent(revision: 3, kind: .conflict, key: "k", scope: .root)))
            try connection.insertConflict(conflict)
            let own = try connection.lastChange(of: "k", at: .root, after: 1)
            return (own, try transactions.commit(newestRevision: 3, following: 1, keysRead: .some(["k"])))
        }
        #expect(own?.event.revision == 2 && own?.stamp == phone)
        #expect(rebase?.shift == 1)
        var moved = conflict
        moved.revision = 4
        moved.winner.revision = 3
        #expect(try await storage.conflicts(ConflictQuery()) == [moved])
        #expect(try await storage.conflicts(ConflictQuery(subtree: "/accounts")).isEmpty)
        #expect(try await storage.conflicts(ConflictQuery(after: 4)).isEmpty)
        let last = try storage.withWriter { try $0.lastChange(of: "k", at: .root, after: 0) }
        #expect(last?.event.revision == 3 && last?.stamp == phone)
        #expect(try storage.withWriter { try $0.appliedSequence(ofDevice: "phone") } == 4)
    }

    @Test("lastChange falls back to the newest set or reset compaction dropped, with its stamp and time; the log's rows come first")
    func lastChangeOfACompactedEntry() throws {
        let storage = SharedMemoryStorage()
        let phone = SyncStamp(milliseconds: 5, counter: 0, device: "phone")
        let laptop = SyncStamp(milliseconds: 7, counter: 0, device: "laptop")
        func change(_ revision: Revision, _ kind: ChangeEvent.Kind, value: JSONValue? = nil, stamp: SyncStamp?) -> LoggedChange {
            LoggedChange(
                event: ChangeEvent(revision: revision, kind: kind, key: "k", scope: .root, value: value), time: Double(revision),
                stamp: stamp)
        }
        let last = try storage.withWriter { connection in
            guard case .shared(let transactions) = connection.transactions else { throw SharedMemoryWriteConnection.Unsupported() }
            _ = try transactions.begin(after: 0, optimistic: true)
            try connection.appendChange(change(1, .set, value: 1, stamp: phone))
            try connection.appendChange(change(2, .reset, stamp: phone))
            try connection.appendChange(change(3, .reset, stamp: laptop))
            try connection.compactChangeLog(keepingFrom: 4, newestRevision: 3)
            #expect(try connection.lastChange(of: "k", at: .root, after: 0) == change(3, .reset, stamp: laptop), "the batch's own row")
            _ = try transactions.commit(newestRevision: 3, following: 0, keysRead: .some([]))
            return try connection.lastChange(of: "k", at: .root, after: 0)
        }
        #expect(last == LoggedChange(compacted: .reset, key: "k", scope: .root, revision: 3, time: 3, stamp: laptop))
        #expect(try storage.withWriter { try $0.lastChange(of: "k", at: .root, after: 3) } == nil)
    }

    @Test("The replica's record, outbox in sequence order and bases come back in the snapshot; a rolled-back batch leaves none")
    func replicaRowsInTheSnapshot() throws {
        let storage = SharedMemoryStorage()
        let record = ReplicaRecord(upstream: "https://prefs.example/", device: "phone", cursor: 7, nextSequence: 3)
        let stamp = SyncStamp(milliseconds: 5, counter: 0, device: "")
        let first = SyncRequest.Mutation(seq: 1, key: "a", scope: .root, value: 1, base: 0, stamp: stamp)
        let second = SyncRequest.Mutation(seq: 2, key: "b", scope: .root, value: nil, base: 3, baseValue: 2, stamp: stamp)
        let entry = SyncEntry(key: "b", scope: .root)
        func batch(_ body: (any WriteConnection) throws -> Void) throws {
            try storage.withWriter { connection in
                guard case .shared(let transactions) = connection.transactions else { throw SharedMemoryWriteConnection.Unsupported() }
                _ = try transactions.begin(after: 0, optimistic: true)
                do {
                    try body(connection)
                    _ = try transactions.commit(newestRevision: 0, following: 0, keysRead: .some([]))
                } catch {
                    connection.rollback()
                    throw error
                }
            }
        }
        try batch { connection in
            try connection.storeReplicaRecord(record)
            try connection.appendOutbox(second)
            try connection.appendOutbox(first)
            try connection.appendOutbox(SyncRequest.Mutation(seq: 3, key: "c", scope: .root, value: 1, base: 0, stamp: stamp))
            try connection.deleteOutbox(sequences: [3])
            try connection.storeSyncBase(SyncBase(revision: 3, value: 2), for: entry)
            try connection.storeSyncBase(SyncBase(revision: 1, value: 1), for: SyncEntry(key: "a", scope: .root))
            try connection.storeSyncBase(nil, for: SyncEntry(key: "a", scope: .root))
        }
        #expect(throws: SharedMemoryWriteConnection.Unsupported.self) {
            try batch { connection in
                try connection.deleteOutbox(sequences: [1, 2])
                throw SharedMemoryWriteConnection.Unsupported()
            }
        }
        let replica = try storage.loadSnapshot().replica
        #expect(replica.record == record)
        #expect(replica.outbox == [first, second])
        #expect(replica.bases == [entry: SyncBase(revision: 3, value: 2)])
    }
}
