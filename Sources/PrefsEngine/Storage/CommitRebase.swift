import PrefsKit

/// What a storage that lets writers run side by side (PostgreSQL, several hosts) did to a batch
/// that others committed ahead of: since nothing the batch read had changed, its changes were
/// committed after theirs, each revision moved up by ``shift``.
package struct CommitRebase: Sendable {
    /// How far each of the batch's own revisions moved up: how many changes others committed
    /// between the batch's start and its commit.
    package var shift: Revision
    /// Those changes, in order: they come before the batch's own.
    package var committedBefore: ChangeLogPage

    /// A rebase by `shift`, past `committedBefore`.
    package init(shift: Revision, committedBefore: ChangeLogPage) {
        self.shift = shift
        self.committedBefore = committedBefore
    }
}
