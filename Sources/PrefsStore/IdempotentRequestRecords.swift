internal import GRDB
import PrefsEngine
import PrefsKit

/// The outcomes of idempotent requests (``StoredOutcome``), kept in `idempotent_request` in the
/// transaction of the write itself.
enum IdempotentRequestRecords {
    /// The outcomes stored under any of `keys`, by key: one statement for up to
    /// ``keysPerLookUp`` keys, each bound as a parameter of `key IN (?, …)`.
    static func fetch(_ db: Database, keys: [String]) throws -> [String: StoredOutcome] {
        var outcomes: [String: StoredOutcome] = [:]
        var rest = keys[...]
        while !rest.isEmpty {
            let some = rest.prefix(keysPerLookUp)
            rest = rest.dropFirst(some.count)
            try db.run(lookUps[some.count - 1]) { row in
                for key in some { row.bind(key) }
            } eachRow: { row in
                let key = row.text(0)
                outcomes[key] = StoredOutcome(
                    key: key, fingerprint: row.text(1), refused: row.integer(2) != 0, body: row.text(3),
                    baseRevision: row.integer(4), createdAt: row.real(5))
            }
        }
        return outcomes
    }

    /// The most keys one look-up binds: a batch's, as a rule.
    static let keysPerLookUp = 16

    /// The look-ups of 1 to ``keysPerLookUp`` keys, made once.
    private static let lookUps = (1...keysPerLookUp).map { count in
        """
        SELECT key, fingerprint, refused, outcome, base_revision, created_at FROM idempotent_request
        WHERE key IN (\(Array(repeating: "?", count: count).joined(separator: ", ")))
        """
    }

    static func insert(_ db: Database, _ outcome: StoredOutcome) throws {
        try db.run(
            """
            INSERT INTO idempotent_request (key, fingerprint, refused, outcome, base_revision, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """
        ) { row in
            row.bind(outcome.key)
            row.bind(outcome.fingerprint)
            row.bind(outcome.refused)
            row.bind(outcome.body)
            row.bind(outcome.baseRevision)
            row.bind(outcome.createdAt)
        }
    }

    /// Drops the outcomes stored before `time`: the rows up to the first one stored since, which
    /// is the first of the table's rows (in the order they were stored) not to be dropped.
    static func prune(_ db: Database, storedBefore time: Double) throws {
        try db.cachedStatement(
            sql: """
                DELETE FROM idempotent_request
                WHERE id < ifnull((SELECT id FROM idempotent_request WHERE created_at >= ? ORDER BY id LIMIT 1), 9223372036854775807)
                """
        ).execute(arguments: [time])
    }
}
