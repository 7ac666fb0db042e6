

/// A value as stored at one scope, with the revision that set it.
package struct StoredValue: Sendable, Hashable {
    /// The value.
    package var value: JSONValue
    /// The revision that set it.
    package var revision: Revision

    /// A value and the revision that set it.
    package init(value: JSONValue, revision: Revision) {
        self.value = value
        self.revision = revision
    }
}
