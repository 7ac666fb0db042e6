internal import GRDB
import PrefsEngine
import PrefsKit

/// The outcomes of idempotent requests (``StoredOutcome``), kept in `idempotent_request` in the
/// transaction of the write itself.
enum IdempotentRequestRecords {
    /// The outcomes stored under any of `keys`, by key: one statement for a batch's keys, however
    /// many, passed as a JSON array.
    static func fetch(_ db: Database, keys: [String]) throws -> [String: StoredOutcome] {
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT key, fingerprint, refused, outcome, base_revision, created_at FROM idempotent_request
                    WHERE key IN (SELECT value FROM json_each(?))
                    """),
            arguments: [JSONValue.array(keys.map(JSONValue.string)).canonicalText])
        var outcomes: [String: StoredOutcome] = [:]
        while let row = try rows.next() {
            let key: String = row["key"]
            outcomes[key] = StoredOutcome(
                key: key, fingerprint: row["fingerprint"], refused: row["refused"], body: row["outcome"],
                baseRevision: row["base_revision"], createdAt: row["created_at"])
        }
        return outcomes
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
