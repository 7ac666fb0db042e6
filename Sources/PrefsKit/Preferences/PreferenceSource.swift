import Foundation

/// Where an effective value came from.
///
/// On the wire it is a string: `override`, `lock:/path`, `scope:/path`, `default` or `none`.
public enum PreferenceSource: Sendable, Hashable, CustomStringConvertible {
    /// A volatile override given to the daemon (`prefsd --override KEY=JSON`).
    case override
    /// A lock at this scope pins the value.
    case lock(ScopePath)
    /// The value set at this scope (the resolved scope or the nearest ancestor that sets one).
    case scope(ScopePath)
    /// The schema's default.
    case `default`
    /// Nothing: no value anywhere and no default.
    case none
    /// A value given to the code's own context (``withPrefs(_:_:isolation:operation:)``, or a
    /// ``ScopeBacked`` property's local value): it never leaves the process.
    case local

    public var description: String {
        switch self {
        case .override: "override"
        case .lock(let scope): "lock:\(scope.path)"
        case .scope(let scope): "scope:\(scope.path)"
        case .default: "default"
        case .none: "none"
        case .local: "local"
        }
    }

    /// Parses the wire form.
    ///
    /// - Parameter text: `override`, `lock:/path`, `scope:/path`, `default`, `none` or `local`.
    /// - Throws: ``PrefsError`` — `invalid_request` for an unknown source, `invalid_scope` for a
    ///   path that is not a scope.
    public init(_ text: String) throws {
        switch text {
        case "override": self = .override
        case "default": self = .default
        case "none": self = .none
        case "local": self = .local
        default:
            if text.hasPrefix("lock:") {
                self = .lock(try ScopePath(String(text.dropFirst(5))))
            } else if text.hasPrefix("scope:") {
                self = .scope(try ScopePath(String(text.dropFirst(6))))
            } else {
                throw PrefsError(.invalidRequest, "Unknown preference source '\(text)'.")
            }
        }
    }
}

extension PreferenceSource: Codable {
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
