import Foundation

/// A change to one field of a patch: leave it, clear it (JSON `null`), or set it.
public enum FieldChange<Value: Sendable & Hashable>: Sendable, Hashable {
    case unchanged
    case clear
    case set(Value)

    /// The field's new value given its old one.
    public func applied(to old: Value?) -> Value? {
        switch self {
        case .unchanged: old
        case .clear: nil
        case .set(let value): value
        }
    }
}
