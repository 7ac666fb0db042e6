/// A span of time as people type it on a command line: a count and a unit — `30s`, `15m`, `2h`,
/// `90d`, `2w` (prefsctl's `--since 2h`, prefsd's `--retain-for 90d`).
package enum DurationText {
    /// The seconds `text` stands for; nil if it is not a count ≥ 0 with one of the units s, m, h,
    /// d, w.
    package static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0, count.isFinite
        else { return nil }
        return count * unit
    }
}
