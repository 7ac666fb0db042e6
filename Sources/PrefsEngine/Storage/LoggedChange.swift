import PrefsKit

/// One row of the change log: a committed change, with what it replaced.
package struct LoggedChange: Sendable, Hashable {
    /// The change as watchers see it.
    package var event: ChangeEvent
    /// For `set`/`reset`: the canonical JSON of the value it replaced (nil: none); for
    /// `schema`: the previous schema's JSON.
    package var oldValue: String?

    /// A change, and what it replaced.
    package init(event: ChangeEvent, oldValue: String? = nil) {
        self.event = event
        self.oldValue = oldValue
    }
}
