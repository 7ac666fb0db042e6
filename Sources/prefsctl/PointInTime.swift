import ArgumentParser
import Foundation
import PrefsKit

/// A point in the store's past as the command line names it: a revision (`41`), a time
/// (`2026-11-27T02:00:00Z`), or a time that long ago (`30s`, `15m`, `2h`, `7d`, `2w`).
struct PointInTime: ExpressibleByArgument {
    /// The point as the audit log's query takes it.
    var bound: ChangeQuery.Bound

    init?(argument: String) {
        if let ago = DurationText.seconds(argument) {
            bound = .time(Date(timeIntervalSinceNow: -ago))
        } else if let bound = try? ChangeQuery.Bound(argument) {
            self.bound = bound
        } else {
            return nil
        }
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
