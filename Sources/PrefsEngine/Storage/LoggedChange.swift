import PrefsKit

/// One row of the change log: a committed change, with what it replaced, when, who made it and
/// why.
package struct LoggedChange: Sendable, Hashable {
    /// The change as watchers see it.
    package var event: ChangeEvent
    /// For `set`/`reset`: the canonical JSON of the value it replaced (nil: none); for
    /// `schema`: the previous schema's JSON.
    package var oldValue: String?
    /// The revision of the entry it replaced: the value's (`set`, `reset`) or the lock's
    /// (`unlock`); nil when there was none, or in a row the log kept before it recorded them.
    package var oldRevision: Revision?
    /// When it was committed, in seconds since 1970.
    package var time: Double
    /// Who made it; nil in a row the log kept before it recorded authors, and in rows read only
    /// to take in other writers' changes.
    package var author: ChangeAuthor?
    /// Why, when the writer said.
    package var reason: String?
    /// When a device made it, by its hybrid logical clock: for a change sync took in from a
    /// device; nil for one made here.
    package var stamp: SyncStamp?

    /// A change, and what it replaced.
    package init(
        event: ChangeEvent, oldValue: String? = nil, oldRevision: Revision? = nil, time: Double = 0,
        author: ChangeAuthor? = nil, reason: String? = nil, stamp: SyncStamp? = nil
    ) {
        self.event = event
        self.oldValue = oldValue
        self.oldRevision = oldRevision
        self.time = time
        self.author = author
        self.reason = reason
        self.stamp = stamp
    }
}

extension LoggedChange {
    /// The newest dropped change of an entry, as `compacted_entry` keeps it: its kind, revision,
    /// time and stamp (``WriteConnection/lastChange(of:at:after:)``'s fallback), without a value.
    package init(compacted kind: ChangeEvent.Kind, key: String, scope: ScopePath, revision: Revision, time: Double, stamp: SyncStamp?) {
        self.init(event: ChangeEvent(revision: revision, kind: kind, key: key, scope: scope), time: time, stamp: stamp)
    }
}
