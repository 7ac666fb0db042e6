import PrefsKit

/// Drafts edited on two devices: `ThreeWayMerge.mergeText` of two edits of a 5 000-character
/// draft, as the drafts will merge them (split into pieces, merged, joined), each merge timed on
/// its own; against one `difference(from:)` of the same base's and first edit's pieces (a merge
/// computes two), timed on its own too.
enum MergeSection: BenchSection {
    /// The seed of the drafts and their edits.
    static let seed: UInt64 = 20_261_129

    static func measure(_ bench: PrefsBench, into table: inout ResultTable) async throws {
        let merges = bench.quick ? 1_000 : 10_000
        var drafts = MergeDrafts(seed: seed)
        for _ in 0..<100 {
            let draft = drafts.next()
            _ = ThreeWayMerge.mergeText(base: draft.base, ours: draft.ours, theirs: draft.theirs)
        }
        var (mergeTimes, differenceTimes) = ([Double](), [Double]())
        var (merged, apart) = (0, 0)
        for index in 0..<merges {
            let draft = drafts.next()
            var start = ContinuousClock.now
            let result = ThreeWayMerge.mergeText(base: draft.base, ours: draft.ours, theirs: draft.theirs)
            mergeTimes.append((ContinuousClock.now - start).seconds * 1e6)
            let (base, ours) = (ThreeWayMerge.words(of: draft.base), ThreeWayMerge.words(of: draft.ours))
            start = ContinuousClock.now
            let difference = ours.difference(from: base)
            differenceTimes.append((ContinuousClock.now - start).seconds * 1e6)
            precondition(!difference.isEmpty || draft.ours == draft.base)
            if result != nil { merged += 1 }
            if let expected = draft.expected {
                apart += 1
                guard result == expected else {
                    throw BenchError("merge \(index) of seed \(seed): edits of different paragraphs did not merge as expected")
                }
            }
        }
        let (merge, difference) = (percentiles(mergeTimes), percentiles(differenceTimes))
        let baseline = "one difference(from:) of the pieces, µs"
        table.add("merge of a 5000-character draft, µs (median)", merge.p50, baseline: (baseline, difference.p50), target: "≤ 1 ms")
        table.add("merge of a 5000-character draft, µs (p99)", merge.p99, baseline: (baseline, difference.p99), target: "-")
        table.add(
            "merges without a conflict, %", percent(merged, of: merges),
            baseline: ("edits in different paragraphs, %", percent(apart, of: merges)), target: "≥ 1×")
        table.note(
            """
            merge: \(merges) merges (\(MergeDrafts.length)-character drafts of 2–5-sentence paragraphs, seed \(seed)), \
            each timed alone: ThreeWayMerge.mergeText, splitting the three texts into pieces, merging and joining. \
            Each device edits one paragraph — in \(MergeDrafts.sameParagraphInTen) pairs of 10 both the same one — \
            with 1–4 word edits (a word inserted, replaced or deleted); every pair in different paragraphs \
            merged to the text expected. The baseline times one difference(from:) of the base's and one edit's pieces.
            """)
    }

    /// The median and 99th percentile of `samples`.
    private static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
        let sorted = samples.sorted()
        return (sorted[sorted.count / 2], sorted[sorted.count * 99 / 100])
    }

    private static func percent(_ count: Int, of total: Int) -> Double { Double(count) * 100 / Double(total) }
}
