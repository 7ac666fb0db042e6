import PrefsKit

/// What a storage that lets writers run side by side (PostgreSQL, several hosts) did to a batch
/// that others committed ahead of: since nothing the batch read had changed, its changes were
/// committed after theirs, each revision moved up by ``shift``.
public struct CommitRebase: Sendable {
    /// How far each of the batch's own revisions moved up: how many changes others committed
    /// between the batch's start and its commit.
    public var shift: Revision
    /// Those changes, in order: they come before the batch's own.
    public var committedBefore: ChangeLogPage

    /// A rebase by `shift`, past `committedBefore`.
    public init(shift: Revision, committedBefore: ChangeLogPage) {
        self.shift = shift
        self.committedBefore = committedBefore
    }
}

/// Thrown by a storage when a batch that ran alongside other writers read something one of them
/// changed before it could commit: the engine runs the batch again, holding the others off.
public struct StorageConflict: Error, Sendable {
    /// What conflicted, for the logs.
    public var reason: String

    /// A conflict, saying what.
    public init(_ reason: String) {
        self.reason = reason
    }
}

/// The preference keys a batch read (and so wrote): what another writer must not have changed
/// for the batch to be committed after it.
public enum KeysRead: Sendable, Equatable {
    /// Every key (a dump, a load, a recursive reset).
    case all
    /// These keys.
    case some(Set<String>)
}
