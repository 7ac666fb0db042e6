#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A 50 MiB attachment's upload and download, with the daemon's peak memory.
enum AttachmentsSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        let connection = try daemon.connection()
        let id = try connection.createDraft(account: "bench")
        let megabytes = Double(size) / 1_000_000
        let rssBefore = daemon.meter.residentMiB
        // Three uploads (medians), each of other bytes: the store keeps equal bytes once. Each
        // starts on a quiet disk: past the daemon's checkpoint of the one before, and with what
        // earlier sections and that checkpoint wrote synced, which an upload's own sync would
        // otherwise wait for.
        var rates: [[Double]] = []
        for round in 0..<(bench.quick ? 1 : 3) {
            try await BenchDaemon.pastCheckpoint()
            sync()
            let uploadStart = ContinuousClock.now
            let attachment = try connection.uploadAttachment(of: id, repeating: pattern(round), size: size)
            let uploadSeconds = (ContinuousClock.now - uploadStart).seconds
            let downloadStart = ContinuousClock.now
            try connection.downloadAttachment(attachment, of: id, size: size)
            let downloadSeconds = (ContinuousClock.now - downloadStart).seconds
            rates.append([megabytes / uploadSeconds, megabytes / downloadSeconds])
        }
        let median = { (index: Int) in rates.map { $0[index] }.sorted()[rates.count / 2] }
        table.add("upload 50 MiB, MB/s (median of \(rates.count))", median(0), baseline: nil, target: "≥ 200 MB/s")
        table.add("download 50 MiB, MB/s (median of \(rates.count))", median(1), baseline: nil, target: "≥ 200 MB/s")
        table.add("prefsd peak RSS during them, MiB", daemon.meter.peakResidentMiB, baseline: ("RSS before", rssBefore), target: "flat (no 50 MiB rise)")
        daemon.stop()
    }

    /// The size of the attachment moved: 50 MiB.
    static let size = 50 * 1024 * 1024

    /// A mebibyte of bytes that differ with `round`: an attachment is that, over and over.
    static func pattern(_ round: Int) -> Data {
        Data((0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) })
    }
}
