import Foundation

/// The benchmark's one table: measured value, baseline from the same run, ratio, target.
struct ResultTable {
    private var rows: [[String]] = [["what", "measured", "baseline (same run)", "ratio", "target"]]
    /// What the rows measured that their columns cannot say, printed below the table.
    private var notes: [String] = []

    /// A note on the rows, printed below the table.
    mutating func note(_ text: String) {
        notes.append(text)
    }

    /// A row that was not measured, and why.
    mutating func skip(_ what: String, because reason: String) {
        rows.append([what, "-", "-", "-", reason])
    }

    mutating func add(_ what: String, _ measured: Double, baseline: (name: String, value: Double)?, target: String) {
        let ratio = baseline.map { String(format: "%.2f×", measured / $0.value) } ?? "-"
        rows.append([what, Self.format(measured), baseline.map { "\(Self.format($0.value)) (\($0.name))" } ?? "-", ratio, target])
    }

    func print() {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            let line = row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
            Swift.print("| " + line.joined(separator: " | ") + " |")
            if index == 0 { Swift.print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
        }
        if !notes.isEmpty { Swift.print("") }
        for note in notes { Swift.print("- " + note) }
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
    }
}
