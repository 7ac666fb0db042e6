import Foundation
import PostgresNIO
import PrefsEngine
import PrefsKit

/// The SQL for drafts' sync rows (`Migrations/postgres/0006_draft_sync.sql`): an upstream's draft
/// versions, and a replica's draft outbox and bases. Their bodies are JSON, written and read
/// whole: they are read by key only.
enum DraftSyncRows {
    static func draftVersion(of id: UUID, at revision: Int64?) -> PostgresQuery {
        guard let revision else {
            return "SELECT body FROM draft_version WHERE draft = \(id.uuidString) ORDER BY revision DESC LIMIT 1"
        }
        return "SELECT body FROM draft_version WHERE draft = \(id.uuidString) AND revision = \(revision)"
    }

    static func draftVersions(of id: UUID, from: Int64, through: Int64) -> PostgresQuery {
        "SELECT body FROM draft_version WHERE draft = \(id.uuidString) AND revision BETWEEN \(from) AND \(through) ORDER BY revision"
    }

    /// The version a row of ``draftVersion(of:at:)`` or ``draftVersions(of:from:through:)`` holds.
    static func draftVersion(_ row: PostgresRow) throws -> DraftVersion {
        try WireJSON.decoder().decode(DraftVersion.self, from: Data(row.makeRandomAccess()["body"].decode(String.self).utf8))
    }

    static func storeDraftVersion(_ version: DraftVersion, time: Double) throws -> [PostgresQuery] {
        let body = String(decoding: try WireJSON.encoder().encode(version), as: UTF8.self)
        return [
            """
            INSERT INTO draft_version (draft, revision, body, time)
            VALUES (\(version.id.uuidString), \(version.revision), \(body), \(time))
            ON CONFLICT (draft, revision) DO UPDATE SET body = excluded.body, time = excluded.time
            """,
            """
            DELETE FROM draft_version
            WHERE draft = \(version.id.uuidString) AND revision < \(version.revision) AND time < \(time - DraftVersion.retention)
            """,
        ]
    }

    static func appendDraftOutbox(_ mutation: DraftMutation) throws -> PostgresQuery {
        let body = String(decoding: try WireJSON.encoder().encode(mutation), as: UTF8.self)
        return "INSERT INTO sync_draft_outbox (sequence, draft, body) VALUES (\(mutation.seq), \(mutation.id.uuidString), \(body))"
    }

    static func deleteDraftOutbox(sequences: [Int64]) -> PostgresQuery {
        "DELETE FROM sync_draft_outbox WHERE sequence = ANY(\(sequences))"
    }

    static func storeDraftBase(_ base: DraftBase?, for id: UUID) throws -> PostgresQuery {
        guard let base else { return "DELETE FROM sync_draft_base WHERE draft = \(id.uuidString)" }
        let body = try base.draft.map { String(decoding: try WireJSON.encoder().encode($0), as: UTF8.self) }
        return """
            INSERT INTO sync_draft_base (draft, revision, body) VALUES (\(id.uuidString), \(base.revision), \(body))
            ON CONFLICT (draft) DO UPDATE SET revision = excluded.revision, body = excluded.body
            """
    }

    static let outbox: PostgresQuery = "SELECT body FROM sync_draft_outbox ORDER BY sequence"
    static let bases: PostgresQuery = "SELECT draft, revision, body FROM sync_draft_base"

    /// The rows of ``outbox`` and ``bases``, into `replica`.
    static func load(outbox outboxRows: [PostgresRow], bases baseRows: [PostgresRow], into replica: inout ReplicaSnapshot) throws {
        let decoder = WireJSON.decoder()
        for row in outboxRows {
            let body = try row.makeRandomAccess()["body"].decode(String.self)
            replica.draftOutbox.append(try decoder.decode(DraftMutation.self, from: Data(body.utf8)))
        }
        for row in baseRows {
            let row = row.makeRandomAccess()
            guard let id = UUID(uuidString: try row["draft"].decode(String.self)) else { continue }
            let draft = try row["body"].decode(String?.self).map { try decoder.decode(Draft.self, from: Data($0.utf8)) }
            replica.draftBases[id] = DraftBase(revision: try row["revision"].decode(Int64.self), draft: draft)
        }
    }
}
