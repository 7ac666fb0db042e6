import Foundation
import Observation

/// A property that follows one draft — its fields, its attachments and its validation, as one
/// ``DraftSnapshot`` — and tells Observation only when any of them changes, including when a
/// compose preference changes its validation. `nil` until loaded, and once deleted.
///
/// ```swift
/// @MainActor @Observable final class ComposeModel {
///     @ObservationIgnored @DraftObserving var draft: DraftSnapshot?
///     init(draftID: UUID) { _draft = DraftObserving(draftID) }
/// }
/// ```
///
/// In an `@Observable` class, mark the property `@ObservationIgnored` (the wrapper is observable
/// itself). It follows through the service of the context where it is created — the enclosing
/// `withPrefs`'s, else the process-wide ``PrefsContext/default``; where there is neither, it
/// stays `nil` and `$property.error` says how to give it a context. Each new snapshot is stored,
/// then observers are told.
@propertyWrapper
public final class DraftObserving: Sendable {
    private let follower: SnapshotFollower<DraftSnapshot?>

    /// Follows a draft through the current context's service.
    ///
    /// - Parameter id: The draft's ID.
    public init(_ id: UUID) {
        follower = SnapshotFollower(initial: nil, context: PrefsContext.current ?? .missing, watch: WatchRequest(draft: id)) {
            service in
            do {
                return try await DraftSnapshot.fetch(id, from: service)
            } catch let error as PrefsError where error.code == .notFound {
                return nil
            }
        }
    }

    /// The draft, its attachments and validation; reading it inside `withObservationTracking`
    /// tracks all of them.
    public var wrappedValue: DraftSnapshot? { follower.snapshot }

    /// Loading, the updates, and why following is interrupted.
    public var projectedValue: FollowerProjection<DraftSnapshot?> { FollowerProjection(follower: follower) }
}
