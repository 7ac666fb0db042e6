import Foundation
internal import GRDB
import PrefsEngine
import PrefsKit

/// Turns SQLite's errors into the ``PrefsError``s callers understand.
enum SQLiteErrors {
    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? DatabaseError else { return StagingErrors.translate(error) }
        switch error.resultCode {
        case .SQLITE_FULL:
            return PrefsError(.storageFull, "The disk is full; the change was not stored. Free some space and retry.")
        case .SQLITE_READONLY:
            return PrefsError(.unavailable, "The database is read-only; the change was not stored.")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return PrefsError(.unavailable, "The database is busy; the change was not stored. Retry.")
        default:
            return PrefsError(.internal, "The database failed: \(error.message ?? "\(error)"). The change was not stored.")
        }
    }
}
