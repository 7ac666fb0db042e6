/// OFREP: one flag's evaluation against a GET of the same key at the same scope, on the socket,
/// 16 connections, in turns (medians).
enum OFREPSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let daemon = try BenchDaemon(prefsd: bench.prefsdURL)
        try daemon.connection().request("PUT", "/v1/prefs/bench.read?scope=/accounts", body: "42")
        try await BenchDaemon.pastCheckpoint()
        let socket = daemon.socketPath
        let requests = bench.quick ? 500 : 3000
        let rates = try Load.interleavedMedians(rounds: bench.rounds, [
            { try Load.getsPerSecond(daemon, connections: 16, requestsPerConnection: requests) },
            {
                try Load.requestsPerSecond(
                    "POST", "/ofrep/v1/evaluate/flags/bench.read", body: #"{"context":{"scope":"/accounts/alice"}}"#, connections: 16,
                    requestsPerConnection: requests
                ) { try BenchConnection(socketPath: socket) }
            },
        ])
        table.add("OFREP evaluations/s, 16 connections", rates[1], baseline: ("GET /v1/prefs/{key}/s", rates[0]), target: "≥ 0.8×")
        daemon.stop()
    }
}
