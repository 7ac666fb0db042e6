import PrefsKit

/// A keyed change's place in the log, as the index's rebuild reads it.
package struct KeyedRevision: Sendable, Hashable {
    /// The change's key.
    package var key: String
    /// Its revision.
    package var revision: Revision
    /// Whether it is a schema's (`schema`).
    package var isSchema: Bool

    /// A keyed change's place.
    package init(key: String, revision: Revision, isSchema: Bool) {
        self.key = key
        self.revision = revision
        self.isSchema = isSchema
    }
}
