import ArgumentParser
import Foundation
import PrefsKit

/// A point in the store's past as the command line names it: a revision (`41`), a time
/// (`2026-11-27T02:00:00Z`), or a time that long ago (`30s`, `15m`, `2h`, `7d`, `2w`).
struct PointInTime: ExpressibleByArgument {
    /// The point as the audit log's query takes it.
    var bound: ChangeQuery.Bound

    init?(argument: String) {
        if let ago = Self.duration(argument) {
            bound = .time(Date(timeIntervalSinceNow: -ago))
        } else if let bound = try? ChangeQuery.Bound(argument) {
            self.bound = bound
        } else {
            return nil
        }
    }

    /// The seconds a duration such as `2h` stands for; nil if `text` is not one.
    private static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0 else { return nil }
        return count * unit
    }

    /// The revision the store was at then: the revision itself, or that of the last change
    /// committed at or before the time (0 if none the log holds was).
    func revision(in service: any PrefsService) async throws -> Revision {
        switch bound {
        case .revision(let revision):
            return revision
        case .time:
            let page = try await service.changes(ChangeQuery(until: bound, limit: 1))
            return page.changes.first?.revision ?? 0
        }
    }

    static let help = "A revision (41), a time (2026-11-27T02:00:00Z) or how long ago (30s, 15m, 2h, 7d, 2w)."
}
