/// A daemon's cold start with 100 000 stored preferences.
enum ColdStartSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let count = bench.quick ? 20_000 : 100_000
        let first = try BenchDaemon(prefsd: bench.prefsdURL, arguments: ["--durability", "normal"])
        let connection = try first.connection()
        for batch in 0..<(count / 1000) {
            let operations = (0..<1000).map { #"{"op":"set","key":"cold.k\#(batch).\#($0)","value":\#($0)}"# }
            try connection.request("POST", "/v1/prefs:batch", body: #"{"operations":[\#(operations.joined(separator: ","))]}"#)
        }
        first.stop(removing: false)
        let second = try BenchDaemon(prefsd: bench.prefsdURL, folder: first.folder)
        table.add("cold start to ready, \(count) prefs, ms", second.startupSeconds * 1000, baseline: nil, target: "≤ 200 ms")
        second.stop()
    }
}
