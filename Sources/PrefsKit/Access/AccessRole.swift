/// What a named token may do within its scope (``AccessToken``): each role may do what the one
/// before it may, and more.
public enum AccessRole: String, Codable, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    /// Reads values, explains them, watches them and reads their history.
    case reader
    /// Also sets and resets values, applies batches, reverts, and writes the drafts of the
    /// accounts under its scope.
    case writer
    /// Also locks and unlocks, registers schemas, loads with `replace`, manages tokens and reads
    /// the metrics.
    case admin

    public var description: String { rawValue }

    public static func < (lhs: AccessRole, rhs: AccessRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The role with this name, or `invalid_request` naming the three.
    ///
    /// - Parameter name: `reader`, `writer` or `admin`.
    public init(named name: String) throws {
        guard let role = AccessRole(rawValue: name) else {
            throw PrefsError(.invalidRequest, "A token's role is reader, writer or admin, not '\(name.prefix(40))'.")
        }
        self = role
    }

    public init(from decoder: any Decoder) throws {
        try self.init(named: try decoder.singleValueContainer().decode(String.self))
    }
}
