import Foundation
import PrefsEngine
import PrefsKit
import Synchronization

/// The engine's write connection to a ``SharedMemoryStorage``, for one turn of its writer.
///
/// As on PostgreSQL, an optimistic batch holds no one off and writes nothing until it commits;
/// its commit checks what others committed since the revision it worked on: a change to a key it
/// read is a ``StorageConflict``, and otherwise its changes go after theirs, its revisions moved
/// up. A batch that is not optimistic holds the others off from its start, so nothing is
/// committed under it. A conflict sync resolved moves with the batch's revisions as its change
/// does, and so do the revisions its sides name that the batch made.
final class SharedMemoryWriteConnection: WriteConnection, SharedTransactions {
    /// A row write the batch will make as it commits.
    private enum Write {
        case value(key: String, scope: ScopePath, StoredValue?)
        case change(LoggedChange)
        case outcome(StoredOutcome)
        case token(name: String, StoredToken?)
        case compaction(keepingFrom: Revision)
        case appliedSequence(device: String, Int64)
        case conflict(SyncConflict)
        case replicaRecord(ReplicaRecord)
        case outbox(SyncRequest.Mutation)
        case deleteOutbox([Int64])
        case base(SyncEntry, SyncBase?)
    }

    /// Why the fake refuses a call: it keeps no locks, schemas, drafts or blobs.
    struct Unsupported: Error {}

    private let storage: SharedMemoryStorage
    private var pending: [Write] = []
    private var optimistic = false

    init(storage: SharedMemoryStorage) {
        self.storage = storage
    }

    // MARK: Transactions

    var transactions: WriteTransactions { .shared(self) }

    func begin(after revision: Revision, optimistic: Bool) throws -> ChangeLogPage {
        pending = []
        self.optimistic = optimistic
        return storage.database.withLock { database in
            database.attempts.append(optimistic)
            let changes = optimistic ? [] : database.log.filter { $0.event.revision > revision }
            return ChangeLogPage(changes: changes, oldestRevision: database.oldestRevision)
        }
    }

    func commit(newestRevision: Revision, following base: Revision, keysRead: KeysRead) throws -> CommitRebase? {
        defer { pending = [] }
        return try storage.database.withLock { database in
            if !optimistic, database.deadlocks > 0 {
                database.deadlocks -= 1
                throw StorageConflict("deadlock with another writer")
            }
            if optimistic, !database.scripted.isEmpty {
                SharedMemoryStorage.commitElsewhere(database.scripted.removeFirst(), in: &database)
            }
            let others = optimistic ? database.log.filter { $0.event.revision > base } : []
            if let touched = others.first(where: { change in change.event.key.map { keysRead.contains($0) } ?? false }) {
                throw StorageConflict("another writer changed \(touched.event.key ?? "")")
            }
            let ownChanges = newestRevision > base
            let shift = ownChanges ? Revision(others.count) : 0
            let moved = { (revision: Revision) in revision > base ? revision + shift : revision }
            for write in pending {
                switch write {
                case .value(let key, let scope, let stored?):
                    database.values[key, default: [:]][scope] = StoredValue(value: stored.value, revision: moved(stored.revision))
                case .value(let key, let scope, nil):
                    database.values[key]?[scope] = nil
                case .change(var change):
                    change.event.revision = moved(change.event.revision)
                    database.log.append(change)
                case .outcome(var outcome):
                    outcome.shift = shift
                    database.outcomes[outcome.key] = outcome
                case .token(let name, let token):
                    database.tokens[name] = token
                case .compaction(let oldest):
                    SharedMemoryStorage.compact(&database, keepingFrom: oldest)
                case .appliedSequence(let device, let sequence):
                    database.devices[device] = sequence
                case .conflict(var conflict):
                    conflict.revision = moved(conflict.revision)
                    conflict.winner.revision = conflict.winner.revision.map(moved)
                    for index in conflict.losers.indices { conflict.losers[index].revision = conflict.losers[index].revision.map(moved) }
                    database.conflicts[conflict.revision] = conflict
                case .replicaRecord(let record):
                    database.replicaRecord = record
                case .outbox(let mutation):
                    database.outbox[mutation.seq] = mutation
                case .deleteOutbox(let sequences):
                    for sequence in sequences { database.outbox[sequence] = nil }
                case .base(let entry, let base):
                    database.bases[entry] = base
                }
            }
            database.newestRevision = max(database.newestRevision, moved(newestRevision))
            database.commits.append(
                SharedMemoryStorage.Commit(
                    optimistic: optimistic, changes: pending.count { if case .change = $0 { true } else { false } },
                    shift: others.isEmpty ? nil : shift))
            return others.isEmpty ? nil : CommitRebase(shift: shift, committedBefore: ChangeLogPage(changes: others, oldestRevision: database.oldestRevision))
        }
    }

    func rollback() {
        pending = []
    }

    func savepoint<T>(_ body: () throws -> T) throws -> T {
        let before = pending
        do {
            return try body()
        } catch {
            pending = before
            throw error
        }
    }

    func checkTransactionIsOpen() throws {}

    func translate(_ error: any Error) -> any Error { error }

    func betweenBatches() {}

    // MARK: Preferences

    func upsertValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) throws {
        pending.append(.value(key: key, scope: scope, StoredValue(value: value, revision: revision)))
    }

    func deleteValue(key: String, scope: ScopePath) throws {
        pending.append(.value(key: key, scope: scope, nil))
    }

    func insertLock(key: String, scope: ScopePath, revision: Revision) throws { throw Unsupported() }
    func deleteLock(key: String, scope: ScopePath) throws { throw Unsupported() }
    func insertToken(_ token: StoredToken) throws {
        pending.append(.token(name: token.name, token))
    }

    func deleteToken(named name: String) throws {
        pending.append(.token(name: name, nil))
    }

    func upsertSchema(key: String, schema: PreferenceSchema, revision: Revision) throws { throw Unsupported() }

    // MARK: Change log

    func appendChange(_ change: LoggedChange) throws {
        pending.append(.change(change))
    }

    func compactChangeLog(keepingFrom oldestRevision: Revision, newestRevision: Revision) throws {
        pending.append(.compaction(keepingFrom: oldestRevision))
    }

    func firstRevision(committedSince time: Double) throws -> Revision? { nil }

    // MARK: Idempotent requests

    func storedOutcomes(forKeys keys: [String]) throws -> [String: StoredOutcome] {
        storage.database.withLock { database in database.outcomes.filter { keys.contains($0.key) } }
    }

    func storeOutcome(_ outcome: StoredOutcome) throws {
        pending.append(.outcome(outcome))
    }

    func pruneOutcomes(storedBefore time: Double) throws {}

    // MARK: Sync

    /// The device's sequence as the batch sees it. Nothing is locked: the test's "other hosts"
    /// take in no device's exchange.
    func appliedSequence(ofDevice device: String) throws -> Int64 {
        for case .appliedSequence(device, let sequence) in pending.reversed() { return sequence }
        return storage.database.withLock { $0.devices[device] ?? 0 }
    }

    func storeAppliedSequence(_ sequence: Int64, ofDevice device: String) throws {
        pending.append(.appliedSequence(device: device, sequence))
    }

    /// The batch's own newest change of the entry, else the log's, else the newest one compaction
    /// dropped (its kind, revision, time and stamp, as `compacted_entry` keeps them).
    func lastChange(of key: String, at scope: ScopePath, after: Revision) throws -> LoggedChange? {
        func matches(_ change: LoggedChange) -> Bool {
            change.event.revision > after && change.event.key == key && change.event.scope == scope
                && (change.event.kind == .set || change.event.kind == .reset)
        }
        for case .change(let change) in pending.reversed() where matches(change) { return change }
        return storage.database.withLock { database in
            if let logged = database.log.last(where: matches) { return logged }
            let dropped = [ChangeEvent.Kind.set, .reset]
                .compactMap { database.compacted[SharedMemoryStorage.CompactedEntry(key: key, scope: scope, kind: $0)] }
                .filter(matches).max { $0.event.revision < $1.event.revision }
            return dropped.map {
                LoggedChange(compacted: $0.event.kind, key: key, scope: scope, revision: $0.event.revision, time: $0.time, stamp: $0.stamp)
            }
        }
    }

    func insertConflict(_ conflict: SyncConflict) throws {
        pending.append(.conflict(conflict))
    }

    func storeReplicaRecord(_ record: ReplicaRecord) throws {
        pending.append(.replicaRecord(record))
    }

    func appendOutbox(_ mutation: SyncRequest.Mutation) throws {
        pending.append(.outbox(mutation))
    }

    func deleteOutbox(sequences: [Int64]) throws {
        pending.append(.deleteOutbox(sequences))
    }

    func storeSyncBase(_ base: SyncBase?, for entry: SyncEntry) throws {
        pending.append(.base(entry, base))
    }

    // MARK: Drafts and blobs

    func draftVersion(of id: UUID, at revision: Int64?) throws -> DraftVersion? { nil }
    func storeDraftVersion(_ version: DraftVersion, time: Double) throws { throw Unsupported() }
    func appendDraftOutbox(_ mutation: DraftMutation) throws { throw Unsupported() }
    func storeDraftBase(_ base: DraftBase?, for id: UUID) throws { throw Unsupported() }
    func draft(_ id: UUID) throws -> Draft? { nil }
    func drafts(account: String?, thread: String?) throws -> [Draft] { [] }
    func insertDraft(_ draft: Draft) throws { throw Unsupported() }
    func updateDraft(_ draft: Draft) throws { throw Unsupported() }
    func deleteDraft(_ draft: Draft) throws { throw Unsupported() }
    func insertAttachment(_ attachment: Attachment) throws { throw Unsupported() }
    func updateAttachment(_ attachment: Attachment) throws { throw Unsupported() }
    func deleteAttachment(_ attachment: Attachment) throws { throw Unsupported() }
    func blobExists(sha256: String) throws -> Bool { false }
    func noteBlob(sha256: String, byteSize: Int64) throws { throw Unsupported() }
    func insertBlob(sha256: String, byteSize: Int64, from file: URL) throws { throw Unsupported() }
    func recordBlobUploader(sha256: String, uploader: String, time: Double) throws { throw Unsupported() }

    // MARK: Blob uploads

    func blobUpload(sha256: String, uploader: String) throws -> BlobUpload? { nil }
    func startBlobUpload(_ upload: BlobUpload) throws { throw Unsupported() }
    func appendToBlobUpload(sha256: String, uploader: String, _ data: Data, time: Double) throws { throw Unsupported() }
    func storeBlobUpload(sha256: String, uploader: String) throws { throw Unsupported() }
    func blobUploadChunk(sha256: String, uploader: String, number: Int) throws -> Data? { nil }
    func deleteBlobUpload(sha256: String, uploader: String) throws { throw Unsupported() }
    func pruneBlobUploads(before time: Double) throws {}
}

extension KeysRead {
    /// Whether `key` is among the keys read.
    fileprivate func contains(_ key: String) -> Bool {
        switch self {
        case .all: true
        case .some(let keys): keys.contains(key)
        }
    }
}
