#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Drafts between devices: a 5 000-character draft edited on device A, one edit at a time, each
/// waiting until device B's watch of the account has it — its way there, and the bytes both
/// devices exchange with the upstream per edit.
extension SyncSection {
    /// Edits of one 5 000-character draft on A (a paragraph's one to four words changed, as
    /// ``MergeDrafts`` makes them), each a `PATCH` of its text, each waiting for B's
    /// `draft.updated` event; the baseline of the time is the same edit's event on a watch of A,
    /// of the bytes the draft's size.
    static func draftEdits(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let devices = try ProxiedDevices(bench)
        defer { devices.stop() }
        let (a, b) = (devices.a, devices.b)
        let (watchA, watchB) = (try a.watchDrafts(), try b.watchDrafts())
        let writer = try a.connection()
        var drafts = MergeDrafts(seed: 0x5EED_D4AF)
        var text = drafts.nextDraft()
        let id = try writer.createDraft(account: "alice", text: text)
        try watchB.readDraftEvent(id)
        try watchA.readDraftEvent(id)

        let samples = bench.quick ? 50 : 200
        var (local, remote): ([Double], [Double]) = ([], [])
        var bytesBefore = 0
        for index in -10..<samples {
            if index == 0 {
                // Let the exchanges of the warm-up end.
                try await Task.sleep(for: .milliseconds(300))
                bytesBefore = devices.bytes
            }
            text = drafts.edited(text)
            let start = ContinuousClock.now
            guard try writer.request("PATCH", "/v1/drafts/\(id)", body: try json(["text": text])) == 200 else {
                throw BenchError("an edit on device A failed")
            }
            try watchA.readDraftEvent(id)
            let onA = ContinuousClock.now
            try watchB.readDraftEvent(id)
            let onB = ContinuousClock.now
            if index >= 0 {
                local.append((onA - start).seconds * 1000)
                remote.append((onB - start).seconds * 1000)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let bytes = Double(devices.bytes - bytesBefore) / Double(samples)
        let onB = try b.connection().requestBody("GET", "/v1/drafts/\(id)")
        guard let held = try JSONSerialization.jsonObject(with: Data(onB.utf8)) as? [String: Any], held["text"] as? String == text else {
            throw BenchError("device B's draft is not A's after the edits")
        }
        let (localP50, localP99) = percentiles(local)
        let (remoteP50, remoteP99) = percentiles(remote)
        let size = Double(text.utf8.count)
        table.add("sync: edit of a 5 000-character draft on A → event on B, p50, ms", remoteP50, baseline: ("event on A", localP50), target: "-")
        table.add(
            "sync: edit of a 5 000-character draft on A → event on B, p99, ms", remoteP99, baseline: ("event on A", localP99),
            target: "≤ 50 ms")
        table.add(
            "sync: bytes on the wire per edit of a 5 000-character draft, A → upstream → B", bytes,
            baseline: ("the draft's bytes", size), target: "≪ 2× (not the draft twice)")
        table.note(
            "sync, drafts: one draft of \(text.count) characters (\(Int(size)) bytes, MergeDrafts' text) on A, \(samples) edits one at a time (each a PATCH of its text changing one to four words of a paragraph), each waiting for B's draft.updated event; B has it through the upstream. Bytes: all bytes both ways of A's and B's TCP connections to the upstream (counting proxies, deflated sync streams), over the edits. A pushes each edit's text as a splice of the text of its base, and B is sent it as a step from the revision it has (TextSplice), so an edit costs about its own bytes and the draft's other fields, deflated."
        )
    }

    /// `object` as JSON text.
    private static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

extension BenchDaemon {
    /// Opens a watch of ``SyncUpstream/scope``'s account's drafts, once the daemon has it.
    func watchDrafts() throws -> BenchConnection {
        let watcher = try connection()
        watcher.send("GET", "/v1/watch?account=alice")
        while try watcher.readLine() != ": watching" {}
        return watcher
    }
}

extension BenchConnection {
    /// Reads watch events until a change of draft `id` (its creation or an update).
    func readDraftEvent(_ id: String) throws {
        while true {
            let line = try readLine()
            guard line.hasPrefix("data:"), line.contains(id) else { continue }
            if line.contains(#""kind":"draft.updated""#) || line.contains(#""kind":"draft.created""#) { return }
        }
    }
}
