import Crypto
import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore

/// What must hold of drafts once a simulated network has healed.
extension SyncSimulationTests {
    /// Where the drafts do not converge, or lost or doubled what devices wrote, once the network
    /// has healed:
    ///
    /// 1. Every replica holds the upstream's drafts of the account, each as the upstream has it —
    ///    its thread and place, text, fields and sync's marks (`conflictOf`, `deletedElsewhere`);
    ///    not its revision or times, which count each store's own changes — and no other draft.
    /// 2. Every thread's places are dense, from 0, on every store; a draft outside threads has none.
    /// 3. Every word a writer typed is in some draft's text upstream — the draft it was typed into,
    ///    or a conflicted copy of it — unless a writer knowingly removed it (erased it from a text
    ///    it showed, or deleted a draft that held it). A word typed into a draft deleted elsewhere
    ///    without its typist seeing it stays: an edit beats a delete.
    /// 4. Exactly once: every draft upstream is one a writer created, or a conflicted copy
    ///    (`conflictOf` set); each pushed draft change was taken in at most once (its other answers
    ///    say `duplicate`), a merged or refused one names the conflict recorded for its draft, and
    ///    no change is a loser of two conflicts — so no change made two copies. (Two copies may
    ///    hold the same text: two devices that made the same edit of a text changed elsewhere.)
    /// 5. No attachment's bytes are lost or sent twice: every attachment of every draft reads, on
    ///    every store, as bytes that hash to its SHA-256; a device sent each blob's bytes up at
    ///    most once (attached again, in another draft, after a cut or a restart: it finds the
    ///    upstream holding them); and it fetched each blob at most once, on its first read.
    ///    (Another device that attaches the same bytes while no draft uses them sends them too:
    ///    that proves it has them, as a hash alone would not.)
    static func draftViolations(in simulation: SyncSimulation) async throws -> [String] {
        let upstream = simulation.upstream!
        let upstreamDrafts = try await upstream.drafts(account: DraftWorkload.account, thread: nil)
        var violations = placeViolations(in: upstreamDrafts, on: "the upstream")
        let expected = Dictionary(uniqueKeysWithValues: upstreamDrafts.map { ($0.id, $0.content) })
        for device in simulation.devices {
            guard let store = device.store else { continue }
            let drafts = try await store.drafts(account: nil, thread: nil)
            violations += placeViolations(in: drafts, on: device.name)
            let held = Dictionary(uniqueKeysWithValues: drafts.map { ($0.id, $0.content) })
            for id in Set(held.keys).union(expected.keys).sorted(by: { $0.uuidString < $1.uuidString }) {
                switch (held[id], expected[id]) {
                case (nil, let there?):
                    violations.append("\(device.name) lacks draft \(id.short), upstream \(try describe(there))")
                case (let here?, nil):
                    violations.append("\(device.name) holds draft \(id.short), which the upstream does not: \(try describe(here))")
                case (let here?, let there?) where here != there:
                    violations.append("\(device.name) differs on draft \(id.short): \(try differences(here, there))")
                default:
                    break
                }
            }
        }
        let words = Set(upstreamDrafts.flatMap { DraftWorkload.words(in: $0.text) })
        let workload = simulation.drafts
        for (word, writer) in workload.typed.sorted(by: { $0.key < $1.key }) where !words.contains(word) && workload.removed[word] == nil {
            violations.append("\(word), typed by \(writer) and removed by no one, is in no draft")
        }
        violations += try await onceViolations(in: simulation, drafts: upstreamDrafts)
        violations += try await bytesViolations(in: simulation, drafts: upstreamDrafts)
        return violations
    }

    /// Property 2 of ``draftViolations(in:)`` for `drafts`, one store's (`store`).
    private static func placeViolations(in drafts: [Draft], on store: String) -> [String] {
        var violations: [String] = []
        for draft in drafts where draft.thread == nil && draft.position != nil {
            violations.append("\(store) has unthreaded draft \(draft.id.short) at place \(draft.position!)")
        }
        let threads = Dictionary(grouping: drafts.filter { $0.thread != nil }, by: { $0.thread! })
        for (thread, members) in threads.sorted(by: { $0.key < $1.key }) {
            let places = members.map { $0.position ?? -1 }.sorted()
            if places != Array(0..<members.count) { violations.append("\(store) has thread \(thread) at places \(places)") }
        }
        return violations
    }

    /// Property 4 of ``draftViolations(in:)``, `drafts` being the upstream's.
    private static func onceViolations(in simulation: SyncSimulation, drafts: [Draft]) async throws -> [String] {
        var violations: [String] = []
        for draft in drafts where draft.conflictOf == nil && !simulation.drafts.created.contains(draft.id) {
            violations.append("draft \(draft.id.short) is neither a writer's nor a conflicted copy: \(try describe(draft.content))")
        }
        let conflicts = try await simulation.upstream.conflicts(ConflictQuery(limit: 1_000_000)).filter { $0.key.hasPrefix("draft:") }
        let byRevision = Dictionary(uniqueKeysWithValues: conflicts.map { ($0.revision, $0) })
        let losers = conflicts.flatMap { conflict in
            conflict.losers.compactMap { loser in loser.sequence.map { "\(loser.device ?? "?")#\($0)" } }
        }
        for (change, count) in Dictionary(losers.map { ($0, 1) }, uniquingKeysWith: +).sorted(by: { $0.key < $1.key }) where count > 1 {
            violations.append("\(change) is a loser of \(count) conflicts")
        }
        for (change, results) in simulation.draftOutcomes.sorted(by: { $0.key < $1.key }) {
            let takenIn = results.filter { $0.outcome != .duplicate }
            if takenIn.count > 1 { violations.append("\(change) was taken in \(takenIn.count) times") }
            for result in takenIn where result.outcome == .resolved || result.outcome == .refused {
                if byRevision[result.conflict ?? 0]?.key != "draft:\(result.id.uuidString)" {
                    violations.append("\(change) was \(result.outcome) naming conflict \(result.conflict ?? 0), not one of its draft's")
                }
            }
        }
        return violations
    }

    /// Property 5 of ``draftViolations(in:)``, `drafts` being the upstream's.
    private static func bytesViolations(in simulation: SyncSimulation, drafts: [Draft]) async throws -> [String] {
        var violations: [String] = []
        let stores = [("the upstream", simulation.upstream!)] + simulation.devices.compactMap { device in device.store.map { (device.name, $0) } }
        for (name, store) in stores {
            for draft in drafts {
                for attachment in draft.attachments {
                    var bytes = Data()
                    do {
                        for try await chunk in try await store.attachmentData(attachment.id, of: draft.id).bytes { bytes.append(chunk) }
                    } catch {
                        violations.append("\(name) cannot read attachment \(attachment.id.short) of \(draft.id.short): \(error)")
                        continue
                    }
                    let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                    if digest != attachment.sha256 { violations.append("\(name) reads attachment \(attachment.id.short) as other bytes") }
                }
            }
        }
        let sizes = Dictionary(DraftWorkload.payloads.map { (SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined(), Int64($0.count)) }) { first, _ in first }
        for (upload, sent) in simulation.blobs.sent.sorted(by: { $0.key < $1.key }) {
            let size = sizes[String(upload.split(separator: " ")[1])] ?? 0
            if sent > size { violations.append("\(upload.prefix(20)) went up as \(sent) bytes for \(size)") }
        }
        for (fetch, count) in simulation.blobs.fetched.sorted(by: { $0.key < $1.key }) where count > 1 {
            violations.append("\(fetch.prefix(20)) was fetched \(count) times")
        }
        return violations
    }

    /// `draft`'s fields as JSON, its ID and revision left out.
    private static func fields(of draft: Draft) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(draft)) as? [String: Any] ?? [:]
        return object.filter { $0.key != "id" && $0.key != "revision" }.mapValues { "\($0)" }
    }

    /// `draft`'s fields, to read in a violation.
    private static func describe(_ draft: Draft) throws -> String {
        try fields(of: draft).sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// The fields in which `here` and `there` differ, each as it is here and there.
    private static func differences(_ here: Draft, _ there: Draft) throws -> String {
        let (mine, theirs) = (try fields(of: here), try fields(of: there))
        return Set(mine.keys).union(theirs.keys).sorted().filter { mine[$0] != theirs[$0] }
            .map { "\($0) \(mine[$0] ?? "none") here, \(theirs[$0] ?? "none") upstream" }.joined(separator: "; ")
    }
}

extension Draft {
    /// The draft as every store that holds it must agree on it: its revision and times, which
    /// count each store's own changes, set aside.
    fileprivate var content: Draft {
        var draft = self
        draft.revision = 0
        draft.createdAt = Date(timeIntervalSince1970: 0)
        draft.updatedAt = Date(timeIntervalSince1970: 0)
        return draft
    }
}
