/// One section of the benchmark.
protocol BenchSection {
    /// Measures, adding the section's rows to `table`.
    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws
}
