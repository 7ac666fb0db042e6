import PrefsKit

/// The answer of `GET /v1/drafts`.
struct DraftList: Codable, Sendable {
    var drafts: [Draft]
}
