#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PrefsSocket

/// Named tokens: GET/s over TCP with a named token against the file token, in turns (medians) —
/// a named token is found in memory, never by a database round trip.
enum TokensSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let folder = URL(fileURLWithPath: "/tmp/prefs-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let tokenFile = folder.appending(path: "token").path
        try "bench-file-token".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let port = LoopbackTCP.freePort()
        let daemon = try BenchDaemon(
            prefsd: bench.prefsdURL, arguments: ["--listen", "127.0.0.1:\(port)", "--token-file", tokenFile], folder: folder)
        let connection = try daemon.connection()
        try connection.request("PUT", "/v1/prefs/bench.read", body: "42")
        let created = try connection.requestBody("POST", "/v1/tokens", body: #"{"name":"bench","role":"reader"}"#)
        guard let start = created.range(of: #""secret":""#), let end = created[start.upperBound...].firstIndex(of: "\"") else {
            throw BenchError("no token was created: \(created)")
        }
        let secret = String(created[start.upperBound..<end])
        try await BenchDaemon.pastCheckpoint()
        let requests = bench.quick ? 500 : 3000
        let gets = try Load.interleavedMedians(
            rounds: bench.rounds,
            ["bench-file-token", secret].map { token in
                {
                    try Load.getsPerSecond(connections: 16, requestsPerConnection: requests, headers: ["Authorization: Bearer \(token)"]) {
                        try BenchConnection(tcpPort: port)
                    }
                }
            })
        table.add("TCP GET/s with a named token, 16 connections", gets[1], baseline: ("file token GET/s", gets[0]), target: "≥ 0.95×")
        daemon.stop()
    }
}
