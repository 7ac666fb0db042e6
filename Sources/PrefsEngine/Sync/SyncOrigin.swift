import PrefsKit

/// How sync takes part in a write (``WriteContext/sync``).
package enum SyncOrigin: Sendable, Hashable {
    /// An upstream takes in a device's change, made at this stamp: its change rows record it.
    case device(SyncStamp)
    /// A replica takes in what its upstream sent: nothing of it goes to the outbox, and the
    /// upstream's rules (locks, schemas, the device's scope) have been applied there already.
    case upstream
}
