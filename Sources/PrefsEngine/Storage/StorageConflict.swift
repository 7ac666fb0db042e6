/// Thrown by a storage when a batch that ran alongside other writers read something one of them
/// changed before it could commit: the engine runs the batch again, holding the others off.
package struct StorageConflict: Error, Sendable {
    /// What conflicted, for the logs.
    package var reason: String

    /// A conflict, saying what.
    package init(_ reason: String) {
        self.reason = reason
    }
}
