import PrefsKit

/// What a replica keeps about its upstream, in its own database: where it syncs to, what it has
/// taken in, and what the upstream said its token may do.
package struct ReplicaRecord: Sendable, Hashable {
    /// The upstream's URL, as configured.
    package var upstream: String
    /// The device's name (its token's), once the upstream has said it.
    package var device: String?
    /// What the device's token may do, once the upstream has said it.
    package var role: AccessRole?
    /// Where, once the upstream has said it.
    package var scope: ScopePath?
    /// The upstream revision the replica has taken in everything up to (0: nothing yet).
    package var cursor: Revision
    /// Whether the replica has taken in a snapshot: until then its writes fill only what is
    /// absent upstream.
    package var snapshotTaken: Bool
    /// The latest stamp of the device's hybrid logical clock, so that a restart never stamps
    /// earlier.
    package var clock: SyncStamp?
    /// The sequence number the next outbox entry takes.
    package var nextSequence: Int64

    /// A record.
    package init(
        upstream: String, device: String? = nil, role: AccessRole? = nil, scope: ScopePath? = nil, cursor: Revision = 0,
        snapshotTaken: Bool = false, clock: SyncStamp? = nil, nextSequence: Int64 = 1
    ) {
        self.upstream = upstream
        self.device = device
        self.role = role
        self.scope = scope
        self.cursor = cursor
        self.snapshotTaken = snapshotTaken
        self.clock = clock
        self.nextSequence = nextSequence
    }
}
