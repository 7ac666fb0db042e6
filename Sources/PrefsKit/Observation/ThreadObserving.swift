import Foundation
import Observation

/// A property that follows every draft of a thread, in order, with their attachments and
/// validations, and tells Observation only when one of them changes.
///
/// In an `@Observable` class, mark the property `@ObservationIgnored`. It finds its context as
/// ``DraftObserving`` does; where there is none, it stays empty and `$property.error` says why.
@propertyWrapper
public final class ThreadObserving: Sendable {
    private let follower: SnapshotFollower<[DraftSnapshot]>

    /// Follows a thread through the current context's service.
    ///
    /// - Parameter id: The thread's ID.
    public init(_ id: String) {
        follower = SnapshotFollower(initial: [], context: PrefsContext.current ?? .missing, watch: WatchRequest(thread: id)) {
            service in
            let drafts: [Draft]
            do {
                drafts = try await service.thread(id)
            } catch let error as PrefsError where error.code == .notFound {
                return []
            }
            var snapshots: [DraftSnapshot] = []
            for draft in drafts {
                snapshots.append(DraftSnapshot(draft: draft, validation: try await service.validation(of: draft.id)))
            }
            return snapshots
        }
    }

    /// The thread's drafts in order; reading it inside `withObservationTracking` tracks them all.
    public var wrappedValue: [DraftSnapshot] { follower.snapshot }

    /// Loading, the updates, and why following is interrupted.
    public var projectedValue: FollowerProjection<[DraftSnapshot]> { FollowerProjection(follower: follower) }
}
