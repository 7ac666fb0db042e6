import Foundation

/// A change to one field of a patch: leave it, clear it (JSON `null`), or set it.
public enum FieldChange<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Leave the field as it is.
    case unchanged
    /// Remove the field's value.
    case clear
    /// Give the field this value.
    case set(Value)

    /// The field's new value given its old one.
    ///
    /// - Parameter old: The field's value before the change.
    /// - Returns: Its value after the change: `old`, nil, or the value set.
    public func applied(to old: Value?) -> Value? {
        switch self {
        case .unchanged: old
        case .clear: nil
        case .set(let value): value
        }
    }
}
