import Foundation
import PrefsKit

/// Moving a key's state along its change log: forward (apply a change) and back (undo one).
/// Replaying a scoped watch from an old revision rebuilds the key's state at that revision this
/// way, then walks forward, reporting each change of the effective value.
extension KeyState {
    /// Applies a logged change.
    mutating func apply(_ event: ChangeEvent) throws {
        switch (event.kind, event.scope) {
        case (.set, let scope?): values[scope] = StoredValue(value: event.value ?? .null, revision: event.revision)
        case (.reset, let scope?): values[scope] = nil
        case (.lock, let scope?): locks[scope] = event.revision
        case (.unlock, let scope?): locks[scope] = nil
        case (.schema, _): schema = try event.value.map { try PreferenceSchema(json: $0.canonicalData) }
        default: break
        }
    }

    /// Undoes a logged change, given what it replaced.
    mutating func revert(_ change: LoggedChange) throws {
        let event = change.event
        switch (event.kind, event.scope) {
        case (.set, let scope?), (.reset, let scope?):
            values[scope] = try change.oldValue.map {
                StoredValue(value: try JSONValue(parsing: $0), revision: change.oldRevision ?? 0)
            }
        case (.lock, let scope?): locks[scope] = nil
        case (.unlock, let scope?): locks[scope] = change.oldRevision ?? 0
        case (.schema, _): schema = try change.oldValue.map { try PreferenceSchema(json: Data($0.utf8)) }
        default: break
        }
    }
}
