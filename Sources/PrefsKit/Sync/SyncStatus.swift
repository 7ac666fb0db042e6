import Foundation

/// Where a replica's sync stands (`GET /v1/sync`, `prefsctl sync`): its upstream, how far it has
/// taken in the upstream's changes, what it has still to push, and how its last exchange went.
public struct SyncStatus: Codable, Sendable, Hashable {
    /// How one exchange with the upstream went.
    public struct Exchange: Codable, Sendable, Hashable {
        /// When it ended.
        public var time: Date
        /// Whether the upstream answered it.
        public var succeeded: Bool
        /// Why it failed, if it did.
        public var error: String?
        /// How many changes it pushed.
        public var pushed: Int
        /// How many of the upstream's changes it took in.
        public var pulled: Int

        /// An exchange.
        public init(time: Date, succeeded: Bool, error: String? = nil, pushed: Int = 0, pulled: Int = 0) {
            self.time = time
            self.succeeded = succeeded
            self.error = error
            self.pushed = pushed
            self.pulled = pulled
        }
    }

    /// The upstream's URL.
    public var upstream: String
    /// The device's name (its token's), once the upstream has said it.
    public var device: String?
    /// What the device's token may do, once the upstream has said it.
    public var role: AccessRole?
    /// Where.
    public var scope: ScopePath?
    /// The upstream revision the replica has taken in everything up to.
    public var cursor: Revision
    /// The upstream's newest revision, as of the last exchange.
    public var upstreamRevision: Revision?
    /// How many local changes are still to be pushed.
    public var outbox: Int
    /// Whether the replica has taken in a first snapshot.
    public var snapshotTaken: Bool
    /// The last exchange, if there was one since the replica started.
    public var lastExchange: Exchange?
    /// When the last exchange the upstream answered ended.
    public var lastSuccess: Date?
    /// How many conflicts the replica has taken in since it started.
    public var conflicts: Int

    /// A status.
    public init(
        upstream: String, device: String?, role: AccessRole?, scope: ScopePath?, cursor: Revision, upstreamRevision: Revision?,
        outbox: Int, snapshotTaken: Bool, lastExchange: Exchange?, lastSuccess: Date?, conflicts: Int
    ) {
        self.upstream = upstream
        self.device = device
        self.role = role
        self.scope = scope
        self.cursor = cursor
        self.upstreamRevision = upstreamRevision
        self.outbox = outbox
        self.snapshotTaken = snapshotTaken
        self.lastExchange = lastExchange
        self.lastSuccess = lastSuccess
        self.conflicts = conflicts
    }

    /// Whether the replica is in step with its upstream: nothing to push, and every change the
    /// upstream had at the last exchange taken in.
    public var isInStep: Bool {
        outbox == 0 && snapshotTaken && upstreamRevision.map { cursor >= $0 } == true
    }
}
