import PrefsKit

/// A page of the change log, and the oldest revision the log held when it was read.
package struct ChangeLogPage: Sendable {
    /// The changes, in revision order.
    package var changes: [LoggedChange]
    /// The oldest revision the log held.
    package var oldestRevision: Revision

    /// A page of `changes` read while the log started at `oldestRevision`.
    package init(changes: [LoggedChange], oldestRevision: Revision) {
        self.changes = changes
        self.oldestRevision = oldestRevision
    }
}
