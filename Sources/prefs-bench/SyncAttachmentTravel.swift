import Foundation

/// An attachment between devices: 50 MiB attached on device A, pushed to the upstream before
/// its draft, and read on device B, which fetches the bytes from the upstream on that first read;
/// against the same bytes' plain upload and download on a daemon that is no replica, in the same
/// run.
extension SyncSection {
    /// The time from A's upload to the end of B's download, as a rate, against the plain upload
    /// plus download; each daemon's peak memory; and the bytes on the wire when a second draft
    /// takes the same bytes.
    static func attachmentTravel(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let size = AttachmentsSection.size
        let megabytes = Double(size) / 1_000_000
        let chunk = AttachmentsSection.pattern(0x5E)

        let plain = try BenchDaemon(prefsd: bench.prefsdURL)
        defer { plain.stop() }
        let direct = try plain.connection()
        let plainDraft = try direct.createDraft(account: "alice")
        try await BenchDaemon.pastCheckpoint()
        let plainStart = ContinuousClock.now
        let plainAttachment = try direct.uploadAttachment(of: plainDraft, repeating: chunk, size: size)
        try direct.downloadAttachment(plainAttachment, of: plainDraft, size: size)
        let plainSeconds = (ContinuousClock.now - plainStart).seconds

        let devices = try ProxiedDevices(bench)
        defer { devices.stop() }
        let daemons = [devices.a, devices.upstream.daemon, devices.b]
        let (onA, onB) = (try devices.a.connection(), try devices.b.connection())
        let watchB = try devices.b.watchDrafts()
        let id = try onA.createDraft(account: "alice", text: "With a film")
        try watchB.readDraftEvent(id)
        let peaksBefore = daemons.map(\.meter.peakResidentMiB)
        let bytesBefore = devices.bytes
        try await BenchDaemon.pastCheckpoint()
        let start = ContinuousClock.now
        let attachment = try onA.uploadAttachment(of: id, repeating: chunk, size: size)
        let onDeviceA = ContinuousClock.now
        repeat { try watchB.readDraftEvent(id) } while try !onB.requestBody("GET", "/v1/drafts/\(id)").contains(attachment)
        try onB.downloadAttachment(attachment, of: id, size: size)
        let end = ContinuousClock.now
        let (seconds, whole) = ((end - onDeviceA).seconds, (end - start).seconds)
        let onTheWire = devices.bytes - bytesBefore
        let rises = zip(daemons.map(\.meter.peakResidentMiB), peaksBefore).map { $0 - $1 }

        // A second draft with the same bytes: A holds them, the upstream holds them.
        let second = try onA.createDraft(account: "alice", text: "The same film")
        try watchB.readDraftEvent(second)
        let secondBefore = devices.bytes
        let again = try onA.uploadAttachment(of: second, repeating: chunk, size: size)
        repeat { try watchB.readDraftEvent(second) } while try !onB.requestBody("GET", "/v1/drafts/\(second)").contains(again)
        try await Task.sleep(for: .milliseconds(300))
        let secondBytes = devices.bytes - secondBefore

        table.add(
            "sync: 50 MiB attachment held on A → read on B, MB/s", megabytes / seconds,
            baseline: ("plain upload + download", megabytes / plainSeconds), target: "≥ 0.5×")
        table.add(
            "sync: peak RSS rise of A, upstream, B (largest) for it, MiB", rises.max() ?? 0,
            baseline: ("the attachment", Double(size) / 1_048_576), target: "flat (≪ 1×)")
        table.add(
            "sync: bytes on the wire for a second draft with the same 50 MiB", Double(secondBytes),
            baseline: ("the attachment", Double(size)), target: "no bytes of it sent")
        table.note(
            "sync, attachment: \(AttachmentsSection.size / 1_048_576) MiB POSTed to a draft on A (Unix socket); A uploads the bytes to the upstream (PATCH /v1/blobs, through a counting proxy) before pushing the draft; B takes the draft in (its watch's draft.updated), and a GET of the attachment on B fetches the bytes from the upstream on that first read, then streams them: timed from A holding the attachment (its POST answered) to the end of B's download — one upload and one download, as the baseline — \(String(format: "%.2f", Double(onTheWire) / Double(size)))× the attachment crossed the proxies; with A's own POST, \(String(format: "%.0f", megabytes / whole)) MB/s. Baseline: the same bytes' upload and download on a daemon that is no replica, in the same run. RSS rises: A \(String(format: "%.1f", rises[0])), upstream \(String(format: "%.1f", rises[1])), B \(String(format: "%.1f", rises[2])) MiB. A second draft on A with the same bytes: \(secondBytes) bytes crossed the proxies in all (the draft's change and its events; HEAD shows the upstream holds the blob)."
        )
    }
}
