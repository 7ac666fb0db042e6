import NIOCore
import PostgresNIO
import PrefsEngine
import PrefsKit

/// Turns PostgreSQL's and the driver's errors into the ``PrefsError``s callers understand: a
/// server that cannot be reached is `unavailable` (HTTP 503), a full disk `storage_full`; a
/// statement the server refuses is a bug, `internal`.
enum PostgresErrors {
    /// The classes of SQLSTATE that mean the server cannot be reached now: a connection
    /// exception, an operator's intervention (a shutdown, a restart), a lack of resources.
    static let unreachableClasses: [PostgresError.Code] = [.connectionException, .operatorIntervention, .insufficientResources]

    /// The SQLSTATEs another host's concurrent transaction can cause — the same row written twice,
    /// a row it freed under one written here, a serialization failure, a deadlock — which make a
    /// batch a ``StorageConflict``, to run again.
    static let conflicts: [PostgresError.Code] = [.uniqueViolation, .foreignKeyViolation, .serializationFailure, .deadlockDetected]

    /// What failed: a write, whose error says nothing was stored, or a read.
    enum Work {
        case writing, reading

        /// What the error says came of it.
        var outcome: String {
            switch self {
            case .writing: "nothing was stored"
            case .reading: "nothing was read"
            }
        }
    }

    /// `error` as a ``PrefsError``; ``PrefsError``s pass unchanged. `location` names the server.
    static func translate(_ error: any Error, location: PostgresLocation, work: Work = .writing) -> any Error {
        switch error {
        case is PrefsError, is CancellationError:
            return error
        case let error as PSQLError:
            switch error.code {
            case .server:
                let state = error.sqlState ?? PostgresError.Code(raw: "")
                let message = error.serverInfo?[.message] ?? "\(error)"
                if state == .diskFull {
                    return PrefsError(.storageFull, "PostgreSQL's disk is full (\(message)); the change was not stored.")
                }
                if unreachableClasses.contains(where: state.isInClass) {
                    return unreachable(location, detail: message, work: work)
                }
                return PrefsError(.internal, "PostgreSQL refused a statement (\(state.raw): \(message)); \(work.outcome).")
            default:
                return unreachable(location, detail: error.code.description, work: work)
            }
        case is ChannelError, is IOError:
            return unreachable(location, detail: "\(error)", work: work)
        default:
            return StagingErrors.translate(error)
        }
    }

    /// The error of a database that cannot be reached.
    static func unreachable(_ location: PostgresLocation, detail: String, work: Work = .writing) -> PrefsError {
        PrefsError(
            .unavailable,
            "PostgreSQL at \(location) is unreachable (\(detail)); \(work.outcome). Retry once it is back.")
    }
}

extension PSQLError {
    /// The SQLSTATE the server answered with, if the server answered.
    var sqlState: PostgresError.Code? {
        serverInfo?[.sqlState].map { PostgresError.Code(raw: $0) }
    }
}

extension PostgresError.Code {
    /// Whether this code is of `errorClass`'s class: SQLSTATEs of one class share their first two
    /// characters.
    func isInClass(_ errorClass: PostgresError.Code) -> Bool {
        raw.prefix(2) == errorClass.raw.prefix(2)
    }
}
