

/// A value as stored at one scope, with the revision that set it.
public struct StoredValue: Sendable, Hashable {
    public var value: JSONValue
    public var revision: Revision

    public init(value: JSONValue, revision: Revision) {
        self.value = value
        self.revision = revision
    }
}
