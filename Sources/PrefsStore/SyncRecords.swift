import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// The SQL for sync's rows (`Migrations/sqlite/0004_sync.sql`): an upstream's devices and the
/// conflicts it resolved; a replica's record, outbox and bases. Written in the writer's
/// transaction; the replica's rows read when the store opens, the conflicts by
/// ``SQLiteStorage/conflicts(_:)``.
enum SyncRecords {
    // MARK: An upstream's side

    /// The highest sequence number taken in from `device`, 0 if none. The writer's transaction
    /// (`BEGIN IMMEDIATE`) holds off every other writer: there is no row to lock.
    static func appliedSequence(_ db: Database, ofDevice device: String) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT applied_sequence FROM sync_device WHERE device = ?"), arguments: [device]) ?? 0
    }

    static func storeAppliedSequence(_ db: Database, _ sequence: Int64, ofDevice device: String) throws {
        try db.run(
            """
            INSERT INTO sync_device (device, applied_sequence) VALUES (?, ?)
            ON CONFLICT (device) DO UPDATE SET applied_sequence = excluded.applied_sequence
            """
        ) { row in
            row.bind(device)
            row.bind(sequence)
        }
    }

    static func insertConflict(_ db: Database, _ conflict: SyncConflict) throws {
        let sides = try conflict.storedSides()
        try db.run(
            """
            INSERT INTO sync_conflict (revision, key, scope, rule, winner, losers, created_at, detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { row in
            row.bind(conflict.revision)
            row.bind(conflict.key)
            row.bind(conflict.scope.path)
            row.bind(conflict.rule.rawValue)
            row.bind(sides.winner)
            row.bind(sides.losers)
            row.bind(conflict.time.timeIntervalSince1970)
            row.bind(conflict.detail)
        }
    }

    /// The conflicts `query` selects.
    static func conflicts(_ db: Database, _ query: ConflictQuery) throws -> [SyncConflict] {
        let (sql, parameters) = query.sql(.sqlite)
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(parameters.map(\.databaseValue))).map { row in
            try SyncConflict(
                storedRevision: row[0], key: row[1], scope: row[2], rule: row[3], winner: row[4], losers: row[5], time: row[6],
                detail: row[7])
        }
    }

    // MARK: A replica's side

    static func storeReplicaRecord(_ db: Database, _ record: ReplicaRecord) throws {
        try db.run(
            """
            INSERT INTO sync_replica (id, upstream, device, role, scope, cursor, snapshot_taken, clock, next_sequence)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET
                upstream = excluded.upstream, device = excluded.device, role = excluded.role, scope = excluded.scope,
                cursor = excluded.cursor, snapshot_taken = excluded.snapshot_taken, clock = excluded.clock,
                next_sequence = excluded.next_sequence
            """
        ) { row in
            row.bind(record.upstream)
            row.bind(record.device)
            row.bind(record.role?.rawValue)
            row.bind(record.scope?.path)
            row.bind(record.cursor)
            row.bind(record.snapshotTaken)
            row.bind(record.clock?.description)
            row.bind(record.nextSequence)
        }
    }

    static func appendOutbox(_ db: Database, _ mutation: SyncRequest.Mutation) throws {
        try db.run(
            """
            INSERT INTO sync_outbox (sequence, key, scope, value, base, base_value, stamp, if_absent, author, reason)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ) { row in
            row.bind(mutation.seq)
            row.bind(mutation.key)
            row.bind(mutation.scope.path)
            row.bind(mutation.value?.canonicalText)
            row.bind(mutation.base)
            row.bind(mutation.baseValue?.canonicalText)
            row.bind(mutation.stamp.description)
            row.bind(mutation.ifAbsent)
            row.bind(mutation.author)
            row.bind(mutation.reason)
        }
    }

    static func deleteOutbox(_ db: Database, sequences: [Int64]) throws {
        for sequence in sequences {
            try db.run("DELETE FROM sync_outbox WHERE sequence = ?") { row in row.bind(sequence) }
        }
    }

    static func storeSyncBase(_ db: Database, _ base: SyncBase?, for entry: SyncEntry) throws {
        guard let base else {
            try db.run("DELETE FROM sync_base WHERE key = ? AND scope = ?") { row in
                row.bind(entry.key)
                row.bind(entry.scope.path)
            }
            return
        }
        try db.run(
            """
            INSERT INTO sync_base (key, scope, revision, value) VALUES (?, ?, ?, ?)
            ON CONFLICT (key, scope) DO UPDATE SET revision = excluded.revision, value = excluded.value
            """
        ) { row in
            row.bind(entry.key)
            row.bind(entry.scope.path)
            row.bind(base.revision)
            row.bind(base.value?.canonicalText)
        }
    }

    /// The replica's record, outboxes (in sequence order) and bases.
    static func loadReplica(_ db: Database) throws -> ReplicaSnapshot {
        var replica = ReplicaSnapshot()
        if let row = try Row.fetchOne(
            db,
            sql: "SELECT upstream, device, role, scope, cursor, snapshot_taken, clock, next_sequence FROM sync_replica WHERE id = 1")
        {
            replica.record = ReplicaRecord(
                upstream: row[0], device: row[1], role: try (row[2] as String?).map { try AccessRole(named: $0) },
                scope: try (row[3] as String?).map { try ScopePath($0) }, cursor: row[4], snapshotTaken: row[5],
                clock: try (row[6] as String?).map { try SyncStamp(stored: $0) }, nextSequence: row[7])
        }
        let outbox = try Row.fetchCursor(
            db,
            sql: """
                SELECT sequence, key, scope, value, base, base_value, stamp, if_absent, author, reason
                FROM sync_outbox ORDER BY sequence
                """)
        while let row = try outbox.next() {
            replica.outbox.append(
                SyncRequest.Mutation(
                    seq: row[0], key: row[1], scope: try ScopePath(row[2]), value: try (row[3] as String?).map { try JSONValue(parsing: $0) },
                    base: row[4], baseValue: try (row[5] as String?).map { try JSONValue(parsing: $0) },
                    stamp: try SyncStamp(stored: row[6]), ifAbsent: row[7], author: row[8], reason: row[9]))
        }
        let bases = try Row.fetchCursor(db, sql: "SELECT key, scope, revision, value FROM sync_base")
        while let row = try bases.next() {
            replica.bases[SyncEntry(key: row[0], scope: try ScopePath(row[1]))] = SyncBase(
                revision: row[2], value: try (row[3] as String?).map { try JSONValue(parsing: $0) })
        }
        try DraftSyncRecords.loadDrafts(db, into: &replica)
        return replica
    }
}

extension ChangeLogFilter.Parameter {
    /// The parameter as GRDB binds it.
    var databaseValue: DatabaseValue {
        switch self {
        case .text(let text): text.databaseValue
        case .integer(let integer): integer.databaseValue
        case .real(let real): real.databaseValue
        }
    }
}
