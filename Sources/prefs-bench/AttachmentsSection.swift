#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A 50 MiB attachment's upload and download, with the daemon's peak memory.
enum AttachmentsSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        let connection = try daemon.connection()
        let created = try connection.requestBody("POST", "/v1/drafts", body: #"{"account": "bench"}"#)
        guard let id = created.split(separator: "\"").drop(while: { $0 != "id" }).dropFirst(2).first else {
            throw BenchError("cannot create a draft: \(created)")
        }
        let size = 50 * 1024 * 1024
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
            let chunk = Data((0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) })
            let uploadStart = ContinuousClock.now
            connection.write(Data("POST /v1/drafts/\(id)/attachments?filename=bench\(round).bin HTTP/1.1\r\nHost: prefsd\r\nContent-Length: \(size)\r\n\r\n".utf8))
            for _ in 0..<(size / chunk.count) { connection.write(chunk) }
            let answer = try connection.requestBodyOfPending()
            let uploadSeconds = (ContinuousClock.now - uploadStart).seconds
            guard let attachment = answer.components(separatedBy: "\"id\":\"").dropFirst().first?.prefix(36) else {
                throw BenchError("the upload failed: \(answer.prefix(300))")
            }
            let downloadStart = ContinuousClock.now
            connection.send("GET", "/v1/drafts/\(id)/attachments/\(attachment)/data")
            let downloaded = try connection.readAndDiscardBody()
            let downloadSeconds = (ContinuousClock.now - downloadStart).seconds
            guard downloaded == size else { throw BenchError("downloaded \(downloaded) of \(size) bytes") }
            rates.append([megabytes / uploadSeconds, megabytes / downloadSeconds])
        }
        let median = { (index: Int) in rates.map { $0[index] }.sorted()[rates.count / 2] }
        table.add("upload 50 MiB, MB/s (median of \(rates.count))", median(0), baseline: nil, target: "≥ 200 MB/s")
        table.add("download 50 MiB, MB/s (median of \(rates.count))", median(1), baseline: nil, target: "≥ 200 MB/s")
        table.add("prefsd peak RSS during them, MiB", daemon.meter.peakResidentMiB, baseline: ("RSS before", rssBefore), target: "flat (no 50 MiB rise)")
        daemon.stop()
    }
}
