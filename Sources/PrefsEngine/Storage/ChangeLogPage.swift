import PrefsKit

/// A page of the change log, and the oldest revision the log held when it was read.
public struct ChangeLogPage: Sendable {
    /// The changes, in revision order.
    public var changes: [LoggedChange]
    /// The oldest revision the log held.
    public var oldestRevision: Revision

    /// A page of `changes` read while the log started at `oldestRevision`.
    public init(changes: [LoggedChange], oldestRevision: Revision) {
        self.changes = changes
        self.oldestRevision = oldestRevision
    }
}
