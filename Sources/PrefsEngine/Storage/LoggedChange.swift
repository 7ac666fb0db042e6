import PrefsKit

/// One row of the change log: a committed change, with what it replaced.
public struct LoggedChange: Sendable, Hashable {
    /// The change as watchers see it.
    public var event: ChangeEvent
    /// For `set`/`reset`: the canonical JSON of the value it replaced (nil: none); for
    /// `schema`: the previous schema's JSON.
    public var oldValue: String?

    /// A change, and what it replaced.
    public init(event: ChangeEvent, oldValue: String? = nil) {
        self.event = event
        self.oldValue = oldValue
    }
}
