import Foundation
import PrefsClientCore
import PrefsKit

/// Ids as people type them: `drafts list` and `drafts show` print the first eight characters,
/// and a command takes a whole id or any start of one that only one draft (or attachment) has,
/// like git's abbreviated hashes.
enum ShortID {
    /// How many characters of an id the tables show.
    static let length = 8

    /// The start of `id` the tables show.
    static func of(_ id: UUID) -> String {
        String(id.uuidString.prefix(length))
    }

    /// The one id in `ids` that starts with `text` (in any case); `not_found` if none does, and
    /// refused if several do.
    static func resolve(_ text: String, among ids: [UUID], kind: String) throws -> UUID {
        guard !text.isEmpty else { throw PrefsError(.invalidRequest, "A \(kind) id cannot be empty.") }
        let matches = ids.filter { $0.uuidString.lowercased().hasPrefix(text.lowercased()) }
        switch matches.count {
        case 0: throw PrefsError(.notFound, "There is no \(kind) '\(text)'.")
        case 1: return matches[0]
        default:
            let candidates = matches.map(\.uuidString).sorted().joined(separator: ", ")
            throw PrefsError(.invalidRequest, "'\(text)' starts \(matches.count) \(kind) ids (\(candidates)); give more of it.")
        }
    }
}

extension PrefsClient {
    /// The draft `text` names: its id, or the start of one (looked up among every draft).
    func draftID(matching text: String) async throws -> UUID {
        if let id = UUID(uuidString: text) { return id }
        return try ShortID.resolve(text, among: try await drafts(account: nil, thread: nil).map(\.id), kind: "draft")
    }

    /// The attachment of `draft` that `text` names: its id, or the start of one.
    func attachmentID(matching text: String, of draft: UUID) async throws -> UUID {
        if let id = UUID(uuidString: text) { return id }
        return try ShortID.resolve(text, among: try await self.draft(draft).attachments.map(\.id), kind: "attachment")
    }
}
