/// Where a value is set: `/` (the root, global) or a path such as `/accounts/alice/threads/42`.
///
/// Scopes nest like directories. A value set at a scope applies to it and to every scope below
/// it that does not set its own (see `PreferenceResolver`).
///
/// Segments are non-empty, made of letters, digits and `_ - . @ + :`, and are not `.` or `..`;
/// a path has no trailing slash and is at most ``maximumLength`` bytes.
public struct ScopePath: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The root scope, `/`.
    public static let root = ScopePath(unchecked: "/")
    /// The longest scope path accepted, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// The path text, e.g. `/accounts/alice`.
    public let path: String

    /// Validates `path`.
    ///
    /// - Parameter path: The path text, such as `/accounts/alice`.
    /// - Throws: ``PrefsError`` — `invalid_scope`, saying what is wrong.
    public init(_ path: String) throws {
        guard path.utf8.count <= Self.maximumLength else {
            throw PrefsError(.invalidScope, "The scope is \(path.utf8.count) bytes long; the limit is \(Self.maximumLength).")
        }
        guard path.hasPrefix("/") else {
            throw PrefsError(.invalidScope, "The scope '\(path)' must start with '/', like '/accounts/alice'.")
        }
        if path != "/" {
            guard !path.hasSuffix("/") else {
                throw PrefsError(.invalidScope, "The scope '\(path)' must not end with '/'.")
            }
            for segment in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
                guard !segment.isEmpty else {
                    throw PrefsError(.invalidScope, "The scope '\(path)' has an empty segment ('//').")
                }
                guard segment != ".", segment != ".." else {
                    throw PrefsError(.invalidScope, "The scope '\(path)' may not contain '.' or '..' segments.")
                }
                guard segment.utf8.allSatisfy(Self.isSegmentByte) else {
                    throw PrefsError(
                        .invalidScope,
                        "The scope segment '\(segment)' may contain only letters, digits and _ - . @ + :"
                    )
                }
            }
        }
        self.path = path
    }

    private init(unchecked path: String) {
        self.path = path
    }

    /// Whether this is `/`.
    public var isRoot: Bool { path == "/" }

    /// The enclosing scope, or `nil` at the root.
    public var parent: ScopePath? {
        guard !isRoot else { return nil }
        let lastSlash = path.lastIndex(of: "/")!
        return lastSlash == path.startIndex ? .root : ScopePath(unchecked: String(path[..<lastSlash]))
    }

    /// This scope, then its parent, and so on up to `/`: the order resolution consults them.
    public var selfAndAncestors: [ScopePath] {
        var result = [self]
        while let parent = result.last!.parent { result.append(parent) }
        return result
    }

    /// Whether `other` is this scope or lies below it.
    ///
    /// - Parameter other: The scope to check.
    /// - Returns: Whether `other` is this scope or one below it.
    public func contains(_ other: ScopePath) -> Bool {
        isRoot || other.path == path || other.path.hasPrefix(path + "/")
    }

    /// The scope one segment below this one.
    ///
    /// - Parameter segment: The segment to add, such as `alice`.
    /// - Returns: This scope with `segment` appended.
    /// - Throws: ``PrefsError`` — `invalid_scope` if the result is not a valid scope.
    public func appending(_ segment: String) throws -> ScopePath {
        try ScopePath(isRoot ? "/" + segment : path + "/" + segment)
    }

    public var description: String { path }

    /// Orders scopes by their path text.
    public static func < (lhs: ScopePath, rhs: ScopePath) -> Bool { lhs.path < rhs.path }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }

    private static func isSegmentByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: ":"):
            true
        default:
            false
        }
    }
}

extension ScopePath: ExpressibleByStringLiteral {
    /// A scope written in code. A literal that is not a valid path is a programming error.
    ///
    /// - Parameter value: The path text, such as `/accounts/alice`.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("Invalid scope literal '\(value)': \(error)") }
    }
}
