import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit

/// The preference rows, change-log entries and sync's conflicts a transaction has written so far,
/// kept until just before it commits and then sent in one statement: a group commit of many
/// requests costs one round trip to the database for all of them, not one per row.
///
/// Only each row's last write is kept — within one transaction that is the row's final state —
/// so no row is written twice in the statement.
struct PendingWrites {
    /// A preference row's primary key.
    struct Row: Hashable {
        var key: String
        var scope: String
    }

    /// Values by row: the new value and its revision, or the row's deletion.
    private(set) var values: [Row: RowWrite<(value: String, revision: Revision)>] = [:]
    /// Locks by row: the revision that made it, or the lock's deletion.
    private(set) var locks: [Row: RowWrite<Revision>] = [:]
    /// Schemas by key, with the revision that registered them.
    private(set) var schemas: [String: (definition: String, revision: Revision)] = [:]
    /// The change log's new entries, in order.
    private(set) var changes: [ChangeRow] = []
    /// The conflicts sync resolved, in order: keyed by their `conflict` change's revision, they
    /// move with the batch's revisions as its log entries do.
    private var conflicts: [ConflictRow] = []
    /// The oldest revision the change log keeps after this transaction, if it compacts.
    var keepChangesFrom: Revision?
    /// The outcomes of the batch's idempotent requests, in order.
    private var outcomes: [OutcomeRow] = []
    /// The keys of idempotent requests the batch looked up and did not find: no other writer may
    /// store an outcome under one of them before the batch commits.
    var keysChecked: Set<String> = []
    /// Outcomes and batch ids stored before this time (seconds since 1970) are dropped, if set.
    var pruneBefore: Double?

    var isEmpty: Bool {
        values.isEmpty && locks.isEmpty && schemas.isEmpty && changes.isEmpty && conflicts.isEmpty && keepChangesFrom == nil
            && outcomes.isEmpty && pruneBefore == nil
    }

    mutating func setValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) {
        values[Row(key: key, scope: scope.path)] = .store((value.canonicalText, revision))
    }

    mutating func deleteValue(key: String, scope: ScopePath) {
        values[Row(key: key, scope: scope.path)] = .delete
    }

    mutating func setLock(key: String, scope: ScopePath, revision: Revision) {
        locks[Row(key: key, scope: scope.path)] = .store(revision)
    }

    mutating func deleteLock(key: String, scope: ScopePath) {
        locks[Row(key: key, scope: scope.path)] = .delete
    }

    mutating func setSchema(key: String, schema: PreferenceSchema, revision: Revision) {
        schemas[key] = (schema.canonicalText, revision)
    }

    mutating func append(_ change: LoggedChange) {
        changes.append(ChangeRow(change))
    }

    mutating func insert(_ conflict: SyncConflict) throws {
        conflicts.append(try ConflictRow(conflict))
    }

    /// The newest `set` or `reset` of `key` at `scope` after `revision` among the batch's own
    /// entries, nil if there is none.
    func lastChange(of key: String, at scope: ScopePath, after revision: Revision) -> ChangeRow? {
        changes.last { change in
            change.revision > revision && change.key == key && change.scope == scope.path
                && (change.kind == ChangeEvent.Kind.set.rawValue || change.kind == ChangeEvent.Kind.reset.rawValue)
        }
    }

    mutating func store(_ outcome: StoredOutcome) {
        outcomes.append(OutcomeRow(outcome))
    }

    /// What the commit functions take after the rows, about the batch itself: its `id`, its
    /// outcomes, the keys it checked, the time, and the pruning.
    private func record(batch id: String, at time: Double) throws -> (id: String, outcomes: String, keysChecked: [String], now: Double, pruneBefore: Double) {
        (id, try Self.json(outcomes), Array(keysChecked), time, pruneBefore ?? 0)
    }

    /// The statement that writes everything pending, sets the revision counter to
    /// `newestRevision`, and — when the transaction made changes (`newestRevision` is above
    /// `startRevision`) — notifies the other hosts with `payload`: a call of `prefsd_commit`
    /// (`Migrations/postgres/`), whose statements PostgreSQL plans once per connection, not at
    /// every commit. The transaction holds the revision counter already. (0004's form, with the
    /// batch's conflicts.)
    func statement(newestRevision: Revision, startRevision: Revision, payload: String, batch: String, time: Double) throws
        -> PostgresQuery
    {
        let rows = try RowsJSON(self)
        let record = try record(batch: batch, at: time)
        return """
            SELECT prefsd_commit(
                \(rows.upserted)::jsonb, \(rows.deleted)::jsonb, \(rows.locked)::jsonb, \(rows.unlocked)::jsonb,
                \(rows.registered)::jsonb, \(rows.logged)::jsonb, \(rows.conflicts)::jsonb, \(keepChangesFrom ?? 0),
                \(newestRevision), \(startRevision), \(payload),
                \(record.id), \(record.outcomes)::jsonb, \(record.keysChecked), \(record.now), \(record.pruneBefore))
            """
    }

    /// The statement that commits an optimistic batch begun at `startRevision`, after whatever
    /// other hosts committed since — unless one of their changes touches `keysRead` or
    /// `draftsRead`. Inside a transaction, a call of `prefsd_commit_after`, whose rows are the
    /// others' changes, each with the log's newest revision once they are in; outside one, a call
    /// of `prefsd_commit_batch`, which commits before it answers, in one row: the log's bounds
    /// and the others' changes (``PostgresRows/committedElsewhere(_:)``). The batch's revisions
    /// move up by the log's newest revision less `startRevision`, and its conflicts with them.
    /// (0004's forms, with the batch's conflicts.)
    func statementAfter(
        startRevision: Revision, keysRead: KeysRead, draftsRead: DraftsRead, newestRevision: Revision, payloadPrefix: String,
        batch: String, time: Double, inTransaction: Bool
    ) throws -> PostgresQuery {
        let rows = try RowsJSON(self)
        let reads = Self.reads(keysRead, draftsRead)
        let record = try record(batch: batch, at: time)
        return """
            \(unescaped: inTransaction ? "SELECT * FROM prefsd_commit_after" : "CALL prefsd_commit_batch")(
                \(startRevision), \(reads.keys), \(reads.allKeys), \(reads.drafts), \(reads.accounts), \(reads.threads), \(reads.allDrafts),
                \(rows.upserted)::jsonb, \(rows.deleted)::jsonb, \(rows.locked)::jsonb, \(rows.unlocked)::jsonb,
                \(rows.registered)::jsonb, \(rows.logged)::jsonb, \(rows.conflicts)::jsonb, \(keepChangesFrom ?? 0),
                \(newestRevision), \(payloadPrefix),
                \(record.id), \(record.outcomes)::jsonb, \(record.keysChecked), \(record.now), \(record.pruneBefore)
                \(unescaped: inTransaction ? ")" : ", NULL, NULL, NULL)")
            """
    }

    /// The statement that checks a batch that wrote nothing: what other hosts committed after
    /// `startRevision` (`prefsd_reads_after`), unless one of their changes touches `keysRead` or
    /// `draftsRead`. Its rows are those of `prefsd_begin`.
    static func readsAfter(startRevision: Revision, keysRead: KeysRead, draftsRead: DraftsRead) -> PostgresQuery {
        let reads = reads(keysRead, draftsRead)
        return """
            SELECT * FROM prefsd_reads_after(
                \(startRevision), \(reads.keys), \(reads.allKeys), \(reads.drafts), \(reads.accounts), \(reads.threads), \(reads.allDrafts))
            """
    }

    /// What a batch read, as the arguments the commit functions take.
    private static func reads(_ keysRead: KeysRead, _ draftsRead: DraftsRead) -> (
        keys: [String], allKeys: Bool, drafts: [String], accounts: [String], threads: [String], allDrafts: Bool
    ) {
        let keys: [String] = if case .some(let keys) = keysRead { Array(keys) } else { [] }
        return (
            keys, keysRead == .all, Array(draftsRead.ids), Array(draftsRead.accounts), Array(draftsRead.threads), draftsRead.all
        )
    }

    /// Everything pending as the JSON arrays of rows the commit functions take.
    private struct RowsJSON {
        var upserted, deleted, locked, unlocked, registered, logged, conflicts: String

        init(_ pending: PendingWrites) throws {
            upserted = try PendingWrites.json(pending.values.compactMap { row, write in
                write.stored.map { ValueRow(key: row.key, scope: row.scope, value: $0.value, revision: $0.revision) }
            })
            deleted = try PendingWrites.json(pending.values.filter { $0.value.isDelete }.map { RowKey(key: $0.key.key, scope: $0.key.scope) })
            locked = try PendingWrites.json(pending.locks.compactMap { row, write in
                write.stored.map { LockRow(key: row.key, scope: row.scope, revision: $0) }
            })
            unlocked = try PendingWrites.json(pending.locks.filter { $0.value.isDelete }.map { RowKey(key: $0.key.key, scope: $0.key.scope) })
            registered = try PendingWrites.json(
                pending.schemas.map { SchemaRow(key: $0.key, definition: $0.value.definition, revision: $0.value.revision) })
            logged = try PendingWrites.json(pending.changes)
            conflicts = try PendingWrites.json(pending.conflicts)
        }
    }

    /// `rows` as a JSON array; most batches leave most kinds of row empty, and `[]` needs no
    /// encoder.
    private static func json<Row: Encodable>(_ rows: [Row]) throws -> String {
        rows.isEmpty ? "[]" : String(decoding: try JSONEncoder().encode(rows), as: UTF8.self)
    }
}

/// An idempotent request's outcome as the commit functions read it.
private struct OutcomeRow: Encodable {
    var key: String
    var fingerprint: String
    var refused: Bool
    var outcome: String
    var baseRevision: Revision
    var createdAt: Double

    private enum CodingKeys: String, CodingKey {
        case key, fingerprint, refused, outcome
        case baseRevision = "base_revision", createdAt = "created_at"
    }

    init(_ stored: StoredOutcome) {
        key = stored.key
        fingerprint = stored.fingerprint
        refused = stored.refused
        outcome = stored.body
        baseRevision = stored.baseRevision
        createdAt = stored.createdAt
    }
}

/// A conflict sync resolved, as the commit functions read it: its sides as JSON text, moved by
/// the database only when the batch's revisions move.
private struct ConflictRow: Encodable {
    var revision: Revision
    var key: String
    var scope: String
    var rule: String
    var winner: String
    var losers: String
    var createdAt: Double
    var detail: String?

    private enum CodingKeys: String, CodingKey {
        case revision, key, scope, rule, winner, losers, detail
        case createdAt = "created_at"
    }

    init(_ conflict: SyncConflict) throws {
        revision = conflict.revision
        key = conflict.key
        scope = conflict.scope.path
        rule = conflict.rule.rawValue
        (winner, losers) = try conflict.storedSides()
        createdAt = conflict.time.timeIntervalSince1970
        detail = conflict.detail
    }
}

private struct RowKey: Encodable {
    var key: String
    var scope: String
}

private struct ValueRow: Encodable {
    var key: String
    var scope: String
    var value: String
    var revision: Revision
}

private struct LockRow: Encodable {
    var key: String
    var scope: String
    var revision: Revision
}

private struct SchemaRow: Encodable {
    var key: String
    var definition: String
    var revision: Revision
}
