import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// The SQL for drafts' sync rows (`Migrations/sqlite/0006_draft_sync.sql`): an upstream's draft
/// versions, and a replica's draft outbox and bases. Their bodies are JSON, written and read
/// whole: they are read by key only.
enum DraftSyncRecords {
    static func draftVersion(_ db: Database, of id: UUID, at revision: Int64?) throws -> DraftVersion? {
        let body: String?
        if let revision {
            body = try String.fetchOne(
                db, sql: "SELECT body FROM draft_version WHERE draft = ? AND revision = ?", arguments: [id.uuidString, revision])
        } else {
            body = try String.fetchOne(
                db, sql: "SELECT body FROM draft_version WHERE draft = ? ORDER BY revision DESC LIMIT 1",
                arguments: [id.uuidString])
        }
        return try body.map { try WireJSON.decoder().decode(DraftVersion.self, from: Data($0.utf8)) }
    }

    static func draftVersions(_ db: Database, of id: UUID, from: Int64, through: Int64) throws -> [DraftVersion] {
        let decoder = WireJSON.decoder()
        return try String.fetchAll(
            db, sql: "SELECT body FROM draft_version WHERE draft = ? AND revision BETWEEN ? AND ? ORDER BY revision",
            arguments: [id.uuidString, from, through]
        ).map { try decoder.decode(DraftVersion.self, from: Data($0.utf8)) }
    }

    static func storeDraftVersion(_ db: Database, _ version: DraftVersion, time: Double) throws {
        let body = String(decoding: try WireJSON.encoder().encode(version), as: UTF8.self)
        try db.run("INSERT OR REPLACE INTO draft_version (draft, revision, body, time) VALUES (?, ?, ?, ?)") { row in
            row.bind(version.id.uuidString)
            row.bind(version.revision)
            row.bind(body)
            row.bind(time)
        }
        try db.run("DELETE FROM draft_version WHERE draft = ? AND revision < ? AND time < ?") { row in
            row.bind(version.id.uuidString)
            row.bind(version.revision)
            row.bind(time - DraftVersion.retention)
        }
    }

    static func appendDraftOutbox(_ db: Database, _ mutation: DraftMutation) throws {
        let body = String(decoding: try WireJSON.encoder().encode(mutation), as: UTF8.self)
        try db.run("INSERT INTO sync_draft_outbox (sequence, draft, body) VALUES (?, ?, ?)") { row in
            row.bind(mutation.seq)
            row.bind(mutation.id.uuidString)
            row.bind(body)
        }
    }

    static func deleteDraftOutbox(_ db: Database, sequences: [Int64]) throws {
        for sequence in sequences {
            try db.run("DELETE FROM sync_draft_outbox WHERE sequence = ?") { row in row.bind(sequence) }
        }
    }

    static func storeDraftBase(_ db: Database, _ base: DraftBase?, for id: UUID) throws {
        guard let base else {
            try db.run("DELETE FROM sync_draft_base WHERE draft = ?") { row in row.bind(id.uuidString) }
            return
        }
        let body = try base.draft.map { String(decoding: try WireJSON.encoder().encode($0), as: UTF8.self) }
        try db.run("INSERT OR REPLACE INTO sync_draft_base (draft, revision, body) VALUES (?, ?, ?)") { row in
            row.bind(id.uuidString)
            row.bind(base.revision)
            row.bind(body)
        }
    }

    /// The replica's draft outbox (in sequence order) and draft bases, into `replica`.
    static func loadDrafts(_ db: Database, into replica: inout ReplicaSnapshot) throws {
        let decoder = WireJSON.decoder()
        for body in try String.fetchAll(db, sql: "SELECT body FROM sync_draft_outbox ORDER BY sequence") {
            replica.draftOutbox.append(try decoder.decode(DraftMutation.self, from: Data(body.utf8)))
        }
        for row in try Row.fetchAll(db, sql: "SELECT draft, revision, body FROM sync_draft_base") {
            guard let id = UUID(uuidString: row[0]) else { continue }
            let draft = try (row[2] as String?).map { try decoder.decode(Draft.self, from: Data($0.utf8)) }
            replica.draftBases[id] = DraftBase(revision: row[1], draft: draft)
        }
    }
}
