import NIOCore
import PostgresNIO
import PrefsEngine
import PrefsKit

/// Turns PostgreSQL's and the driver's errors into the ``PrefsError``s callers understand: a
/// server that cannot be reached is `unavailable` (HTTP 503), a full disk `storage_full`; a
/// statement the server refuses is a bug, `internal`.
enum PostgresErrors {
    /// `error` as a ``PrefsError``; ``PrefsError``s pass unchanged. `location` names the server.
    static func translate(_ error: any Error, location: PostgresLocation) -> any Error {
        switch error {
        case is PrefsError, is CancellationError:
            return error
        case let error as PSQLError:
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                let message = error.serverInfo?[.message] ?? "\(error)"
                if state == "53100" {
                    return PrefsError(.storageFull, "PostgreSQL's disk is full (\(message)); the change was not stored.")
                }
                // Class 08 (connection), 57 (operator intervention: shutdown, restart), 53 (resources).
                if state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53") {
                    return unreachable(location, detail: message)
                }
                return PrefsError(.internal, "PostgreSQL refused a statement (\(state): \(message)); nothing was stored.")
            default:
                return unreachable(location, detail: error.code.description)
            }
        case is ChannelError, is IOError:
            return unreachable(location, detail: "\(error)")
        default:
            return StagingErrors.translate(error)
        }
    }

    /// The error of a database that cannot be reached.
    static func unreachable(_ location: PostgresLocation, detail: String) -> PrefsError {
        PrefsError(
            .unavailable,
            "PostgreSQL at \(location) is unreachable (\(detail)); nothing was stored. Retry once it is back.")
    }
}
