

/// A value as stored at one scope, with the revision that set it.
public struct StoredValue: Sendable, Hashable {
    /// The value.
    public var value: JSONValue
    /// The revision that set it.
    public var revision: Revision

    /// A value and the revision that set it.
    public init(value: JSONValue, revision: Revision) {
        self.value = value
        self.revision = revision
    }
}
