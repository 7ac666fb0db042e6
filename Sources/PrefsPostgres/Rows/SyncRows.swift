import PostgresNIO
import PrefsEngine
import PrefsKit

/// The SQL for sync's rows (`Migrations/postgres/0004_sync.sql`) that the writer writes at once,
/// in its batch's transaction, and that are read back: an upstream's devices and conflicts, a
/// replica's record, outbox and bases. Conflicts are not here: they wait with the batch's rows
/// (``PendingWrites``), and move with its revisions.
enum SyncRows {
    // MARK: An upstream's side

    /// Makes sure `device` has a row: another host taking in the same device's exchange waits
    /// here for this transaction to end, rather than failing on the row's key.
    static func ensureDevice(_ device: String) -> PostgresQuery {
        "INSERT INTO sync_device (device, applied_sequence) VALUES (\(device), 0) ON CONFLICT (device) DO NOTHING"
    }

    /// `device`'s row, locked until the transaction ends.
    static func lockDevice(_ device: String) -> PostgresQuery {
        "SELECT applied_sequence FROM sync_device WHERE device = \(device) FOR UPDATE"
    }

    static func storeAppliedSequence(_ sequence: Int64, ofDevice device: String) -> PostgresQuery {
        """
        INSERT INTO sync_device (device, applied_sequence) VALUES (\(device), \(sequence))
        ON CONFLICT (device) DO UPDATE SET applied_sequence = excluded.applied_sequence
        """
    }

    /// The newest `set` or `reset` of `key` at `scope` after `revision`: the log read from its
    /// newest end down to `revision`, by the primary key alone.
    static func lastChange(of key: String, at scope: ScopePath, after revision: Revision) -> PostgresQuery {
        """
        SELECT \(unescaped: ChangeLogFilter.columns) FROM change
        WHERE revision > \(revision) AND key = \(key) AND scope = \(scope.path) AND kind IN ('set', 'reset')
        ORDER BY revision DESC LIMIT 1
        """
    }

    /// The newest `set` or `reset` of `key` at `scope` after `revision` that compaction dropped
    /// (`compacted_entry`).
    static func compactedChange(of key: String, at scope: ScopePath, after revision: Revision) -> PostgresQuery {
        """
        SELECT kind, revision, time, stamp FROM compacted_entry
        WHERE key = \(key) AND scope = \(scope.path) AND kind IN ('set', 'reset') AND revision > \(revision)
        ORDER BY revision DESC LIMIT 1
        """
    }

    /// A row of ``compactedChange(of:at:after:)``, of `key` at `scope`, as a change without a value.
    static func compactedChange(_ row: PostgresRow, of key: String, at scope: ScopePath) throws -> LoggedChange {
        let row = row.makeRandomAccess()
        return LoggedChange(
            compacted: ChangeEvent.Kind(rawValue: try row["kind"].decode(String.self)), key: key, scope: scope,
            revision: try row["revision"].decode(Int64.self), time: try row["time"].decode(Double.self),
            stamp: try row["stamp"].decode(String?.self).map { try SyncStamp(stored: $0) })
    }

    /// The conflicts `query` selects.
    static func conflictsQuery(_ query: ConflictQuery) -> PostgresQuery {
        let (sql, parameters) = query.sql(.postgres)
        var bindings = PostgresBindings(capacity: parameters.count)
        for parameter in parameters {
            switch parameter {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .real(let real): bindings.append(real)
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    /// A row of ``ConflictQuery/columns``.
    static func conflict(_ row: PostgresRow) throws -> SyncConflict {
        let row = row.makeRandomAccess()
        return try SyncConflict(
            storedRevision: row["revision"].decode(Int64.self), key: row["key"].decode(String.self),
            scope: row["scope"].decode(String.self), rule: row["rule"].decode(String.self),
            winner: row["winner"].decode(String.self), losers: row["losers"].decode(String.self),
            time: row["created_at"].decode(Double.self), detail: row["detail"].decode(String?.self))
    }

    // MARK: A replica's side

    static func storeReplicaRecord(_ record: ReplicaRecord) -> PostgresQuery {
        """
        INSERT INTO sync_replica (id, upstream, device, role, scope, cursor, snapshot_taken, clock, next_sequence)
        VALUES (
            1, \(record.upstream), \(record.device), \(record.role?.rawValue), \(record.scope?.path), \(record.cursor),
            \(record.snapshotTaken), \(record.clock?.description), \(record.nextSequence))
        ON CONFLICT (id) DO UPDATE SET
            upstream = excluded.upstream, device = excluded.device, role = excluded.role, scope = excluded.scope,
            cursor = excluded.cursor, snapshot_taken = excluded.snapshot_taken, clock = excluded.clock,
            next_sequence = excluded.next_sequence
        """
    }

    static func appendOutbox(_ mutation: SyncRequest.Mutation) -> PostgresQuery {
        """
        INSERT INTO sync_outbox (sequence, key, scope, value, base, base_value, stamp, if_absent, author, reason)
        VALUES (
            \(mutation.seq), \(mutation.key), \(mutation.scope.path), \(mutation.value?.canonicalText), \(mutation.base),
            \(mutation.baseValue?.canonicalText), \(mutation.stamp.description), \(mutation.ifAbsent), \(mutation.author),
            \(mutation.reason))
        """
    }

    static func deleteOutbox(sequences: [Int64]) -> PostgresQuery {
        "DELETE FROM sync_outbox WHERE sequence = ANY(\(sequences))"
    }

    static func storeSyncBase(_ base: SyncBase?, for entry: SyncEntry) -> PostgresQuery {
        guard let base else { return "DELETE FROM sync_base WHERE key = \(entry.key) AND scope = \(entry.scope.path)" }
        return """
            INSERT INTO sync_base (key, scope, revision, value)
            VALUES (\(entry.key), \(entry.scope.path), \(base.revision), \(base.value?.canonicalText))
            ON CONFLICT (key, scope) DO UPDATE SET revision = excluded.revision, value = excluded.value
            """
    }

    static let replicaRecord: PostgresQuery =
        "SELECT upstream, device, role, scope, cursor, snapshot_taken, clock, next_sequence FROM sync_replica WHERE id = 1"
    static let outbox: PostgresQuery = """
        SELECT sequence, key, scope, value, base, base_value, stamp, if_absent, author, reason FROM sync_outbox ORDER BY sequence
        """
    static let bases: PostgresQuery = "SELECT key, scope, revision, value FROM sync_base"

    /// The replica's state from the rows of ``replicaRecord``, ``outbox`` and ``bases``.
    static func replica(record recordRows: [PostgresRow], outbox outboxRows: [PostgresRow], bases baseRows: [PostgresRow]) throws
        -> ReplicaSnapshot
    {
        var replica = ReplicaSnapshot()
        if let row = recordRows.first?.makeRandomAccess() {
            replica.record = ReplicaRecord(
                upstream: try row["upstream"].decode(String.self), device: try row["device"].decode(String?.self),
                role: try row["role"].decode(String?.self).map { try AccessRole(named: $0) },
                scope: try row["scope"].decode(String?.self).map { try ScopePath($0) }, cursor: try row["cursor"].decode(Int64.self),
                snapshotTaken: try row["snapshot_taken"].decode(Bool.self),
                clock: try row["clock"].decode(String?.self).map { try SyncStamp(stored: $0) },
                nextSequence: try row["next_sequence"].decode(Int64.self))
        }
        for row in outboxRows {
            let row = row.makeRandomAccess()
            replica.outbox.append(
                SyncRequest.Mutation(
                    seq: try row["sequence"].decode(Int64.self), key: try row["key"].decode(String.self),
                    scope: try ScopePath(row["scope"].decode(String.self)),
                    value: try row["value"].decode(String?.self).map { try JSONValue(parsing: $0) },
                    base: try row["base"].decode(Int64.self),
                    baseValue: try row["base_value"].decode(String?.self).map { try JSONValue(parsing: $0) },
                    stamp: try SyncStamp(stored: row["stamp"].decode(String.self)), ifAbsent: try row["if_absent"].decode(Bool?.self),
                    author: try row["author"].decode(String?.self), reason: try row["reason"].decode(String?.self)))
        }
        for row in baseRows {
            let row = row.makeRandomAccess()
            replica.bases[SyncEntry(key: try row["key"].decode(String.self), scope: try ScopePath(row["scope"].decode(String.self)))] =
                SyncBase(
                    revision: try row["revision"].decode(Int64.self),
                    value: try row["value"].decode(String?.self).map { try JSONValue(parsing: $0) })
        }
        return replica
    }
}
