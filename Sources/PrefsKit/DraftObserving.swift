import Foundation
import Observation

/// A draft as the compose screen shows it: the draft with its attachments, and its validation.
public struct DraftSnapshot: Sendable, Hashable {
    public var draft: Draft
    /// Whether it can be published, against the compose preferences at its scope.
    public var validation: DraftValidation

    public init(draft: Draft, validation: DraftValidation) {
        self.draft = draft
        self.validation = validation
    }

    /// The draft and its validation, fetched together.
    static func fetch(_ id: UUID, from service: any PrefsService) async throws -> DraftSnapshot {
        DraftSnapshot(draft: try await service.draft(id), validation: try await service.validation(of: id))
    }
}

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

    /// Follows draft `id` through the current context's service.
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

/// A property that follows every draft of a thread, in order, with their attachments and
/// validations, and tells Observation only when one of them changes.
///
/// In an `@Observable` class, mark the property `@ObservationIgnored`. It finds its context as
/// ``DraftObserving`` does; where there is none, it stays empty and `$property.error` says why.
@propertyWrapper
public final class ThreadObserving: Sendable {
    private let follower: SnapshotFollower<[DraftSnapshot]>

    /// Follows thread `id` through the current context's service.
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

/// What `$property` gives for ``DraftObserving`` and ``ThreadObserving``.
public struct FollowerProjection<Snapshot: Sendable & Equatable>: Sendable {
    fileprivate let follower: SnapshotFollower<Snapshot>

    /// Returns once the first snapshot is in — at once if it already is. Throws what kept it
    /// from coming in (``error``: no context, the service cannot be reached), `unavailable` if
    /// it is not in within `timeout` (when given), or `CancellationError`.
    public func loaded(timeout: Duration? = nil) async throws { try await follower.loaded(timeout: timeout) }

    /// The snapshot, then each new one.
    public var updates: AsyncStream<Snapshot> { follower.updates }

    /// Why following is interrupted (no context, the daemon went away, the store closed), while
    /// it is.
    public var error: PrefsError? { follower.error }
}
