import Foundation
import Observation

/// What `$property` gives for ``DraftObserving`` and ``ThreadObserving``.
public struct FollowerProjection<Snapshot: Sendable & Equatable>: Sendable {
    let follower: SnapshotFollower<Snapshot>

    /// Returns once the first snapshot is in — at once if it already is.
    ///
    /// - Parameter timeout: How long to wait, or nil (the default) to wait as long as it takes.
    /// - Throws: What kept the snapshot from coming in (``error``: no context, the service cannot
    ///   be reached); ``PrefsError`` `unavailable` if it is not in within `timeout`; or
    ///   `CancellationError`.
    public func loaded(timeout: Duration? = nil) async throws { try await follower.loaded(timeout: timeout) }

    /// The snapshot, then each new one.
    public var updates: AsyncStream<Snapshot> { follower.updates }

    /// Why following is interrupted (no context, the daemon went away, the store closed), while
    /// it is.
    public var error: PrefsError? { follower.error }
}
