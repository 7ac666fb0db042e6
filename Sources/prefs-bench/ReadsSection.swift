/// Reads in the process: an embedded store's, a wrapper's, a context's.
enum ReadsSection: BenchSection {
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let reads = try await ReadCost.medians()
        table.add("embedded resolve, ns per read (median)", reads.resolve, baseline: nil, target: "≤ 1 µs")
        table.add("@PreferenceObserving read, ns (median)", reads.wrapper, baseline: nil, target: "≤ 1 µs")
        table.add("withPrefs context read, ns (median)", reads.context, baseline: nil, target: "≤ 1 µs")
    }
}
