import Foundation
import PrefsKit

/// What a replica last took in from its upstream for a key at a scope: the upstream revision of
/// the entry and its value (nil: none). A local change is pushed as based on it.
package struct SyncBase: Sendable, Hashable {
    /// The upstream revision of the entry (0: none).
    package var revision: Revision
    /// Its value; nil: none.
    package var value: JSONValue?

    /// A base.
    package init(revision: Revision, value: JSONValue?) {
        self.revision = revision
        self.value = value
    }
}

/// A key at a scope: what a ``SyncBase`` is kept for.
package struct SyncEntry: Sendable, Hashable, Comparable {
    package var key: String
    package var scope: ScopePath

    /// An entry.
    package init(key: String, scope: ScopePath) {
        self.key = key
        self.scope = scope
    }

    package static func < (lhs: SyncEntry, rhs: SyncEntry) -> Bool {
        (lhs.key, lhs.scope) < (rhs.key, rhs.scope)
    }
}

/// A local change waiting in a replica's outbox to be pushed: the mutation as it will be sent,
/// its ``SyncRequest/Mutation/seq`` the entry's sequence number.
package typealias OutboxEntry = SyncRequest.Mutation

/// Everything a replica keeps about its sync, as its storage loads it.
package struct ReplicaSnapshot: Sendable {
    /// The replica's record; nil for a store that has never synced.
    package var record: ReplicaRecord?
    /// The outbox, in sequence order.
    package var outbox: [SyncRequest.Mutation]
    /// The upstream's entries as last taken in.
    package var bases: [SyncEntry: SyncBase]
    /// The draft outbox, in sequence order.
    package var draftOutbox: [DraftMutation]
    /// The upstream's drafts as last taken in.
    package var draftBases: [UUID: DraftBase]

    /// A replica's state.
    package init(
        record: ReplicaRecord? = nil, outbox: [SyncRequest.Mutation] = [], bases: [SyncEntry: SyncBase] = [:],
        draftOutbox: [DraftMutation] = [], draftBases: [UUID: DraftBase] = [:]
    ) {
        self.record = record
        self.outbox = outbox
        self.bases = bases
        self.draftOutbox = draftOutbox
        self.draftBases = draftBases
    }
}
