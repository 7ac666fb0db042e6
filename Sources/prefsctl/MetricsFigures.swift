import Foundation

/// The figures of the daemon's metrics (`GET /v1/metrics`, Prometheus' text format) that
/// `prefsctl status` shows: each metric's samples summed over their labels.
struct MetricsFigures {
    private var sums: [String: Double] = [:]

    /// The figures of `text`. A sample line is `name{labels} value`, its value last (label values
    /// may hold spaces); comments and anything unreadable are passed over.
    init(text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let name = series.firstIndex(of: "{").map { series[..<$0] } ?? series
            sums[String(name), default: 0] += value
        }
    }

    /// The sum of `name`'s samples; 0 if there are none.
    subscript(_ name: String) -> Double {
        sums[name] ?? 0
    }

    /// `name`'s sum as a whole number.
    func count(_ name: String) -> String {
        String(Int64(self[name]))
    }

    /// The mean of the histogram `name` (its `_sum` over its `_count`), scaled by `scale` and
    /// written with `unit`; `-` before its first sample.
    func mean(_ name: String, scale: Double = 1, unit: String = "") -> String {
        let count = self[name + "_count"]
        guard count > 0 else { return "-" }
        return String(format: "%.3g", self[name + "_sum"] / count * scale) + unit
    }
}
