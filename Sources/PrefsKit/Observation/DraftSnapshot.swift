import Foundation
import Observation

/// A draft as the compose screen shows it: the draft with its attachments, and its validation.
public struct DraftSnapshot: Sendable, Hashable {
    /// The draft, with its attachments.
    public var draft: Draft
    /// Whether it can be published, against the compose preferences at its scope.
    public var validation: DraftValidation

    /// A draft and its validation.
    ///
    /// - Parameters:
    ///   - draft: The draft, with its attachments.
    ///   - validation: Whether it can be published.
    public init(draft: Draft, validation: DraftValidation) {
        self.draft = draft
        self.validation = validation
    }

    /// The draft and its validation, fetched together.
    static func fetch(_ id: UUID, from service: any PrefsService) async throws -> DraftSnapshot {
        DraftSnapshot(draft: try await service.draft(id), validation: try await service.validation(of: id))
    }
}
