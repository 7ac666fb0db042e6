import PrefsKit

/// The answer of `GET /v1/threads/{thread}`: its drafts in order.
struct ThreadDrafts: Codable, Sendable {
    var thread: String
    var drafts: [Draft]
}
