import Foundation

/// Whether a draft can be published, and if not, why (`GET /v1/drafts/{id}/validation`).
public struct DraftValidation: Codable, Sendable, Hashable {
    /// Whether the draft can be published: there are no problems.
    public var valid: Bool
    /// Why it cannot, one problem each.
    public var problems: [ValidationProblem]
    /// The draft revision this is the validation of.
    public var revision: Int64

    /// The validation with these problems (none: valid).
    ///
    /// - Parameters:
    ///   - problems: Why the draft cannot be published; empty when it can.
    ///   - revision: The draft revision this is the validation of.
    public init(problems: [ValidationProblem], revision: Int64) {
        self.valid = problems.isEmpty
        self.problems = problems
        self.revision = revision
    }

    /// Validates `draft` (with its attachments) against `rules`.
    package init(of draft: Draft, rules: ComposeRules) {
        var problems: [ValidationProblem] = []
        func problem(_ code: String, _ field: String, _ message: String) {
            problems.append(ValidationProblem(code: code, field: field, message: message))
        }
        // Characters as people count them: grapheme clusters, so "é" or "👍🏽" is one.
        let characters = draft.text.count + (draft.contentWarning?.count ?? 0)
        if characters > rules.maxCharacters {
            problem(
                "too_long", "text",
                "The text and content warning have \(characters) characters; the limit is \(rules.maxCharacters).")
        }
        if draft.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && draft.attachments.isEmpty && draft.poll == nil {
            problem("empty", "text", "The draft has no text, attachment or poll.")
        }
        if draft.attachments.count > rules.maxAttachments {
            problem(
                "too_many_attachments", "attachments",
                "The draft has \(draft.attachments.count) attachments; the limit is \(rules.maxAttachments).")
        }
        if rules.requireAltText {
            for (index, attachment) in draft.attachments.enumerated()
            where attachment.altText?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ?? true {
                problem("missing_alt_text", "attachments[\(index)].altText", "'\(attachment.filename)' needs alt text.")
            }
        }
        let kinds = Set(draft.attachments.map(\.kind))
        if kinds.contains(.video), !kinds.isDisjoint(with: [.image, .gif, .drawing]) {
            problem("mixed_media", "attachments", "A video cannot be posted together with images.")
        }
        if let poll = draft.poll {
            if !(2...4).contains(poll.options.count) {
                problem("poll_options_count", "poll.options", "A poll has 2 to 4 options, not \(poll.options.count).")
            }
            for (index, option) in poll.options.enumerated() where !(1...50).contains(option.count) {
                problem("poll_option_length", "poll.options[\(index)]", "A poll option has 1 to 50 characters, not \(option.count).")
            }
            if !draft.attachments.isEmpty {
                problem("poll_with_attachments", "poll", "A post cannot have both a poll and attachments.")
            }
        }
        self.init(problems: problems, revision: draft.revision)
    }
}
