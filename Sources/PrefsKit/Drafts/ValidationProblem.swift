import Foundation

/// One reason a draft cannot be published yet.
public struct ValidationProblem: Codable, Sendable, Hashable {
    /// Stable, for programs: `too_long`, `too_many_attachments`, `missing_alt_text`,
    /// `poll_options_count`, `poll_option_length`, `poll_with_attachments`, `mixed_media`, `empty`.
    public var code: String
    /// The field at fault, e.g. `text`, `attachments[1].altText`, `poll.options[0]`.
    public var field: String
    /// For people.
    public var message: String

    /// A problem with its code, field and message.
    ///
    /// - Parameters:
    ///   - code: The problem's stable code, such as `too_long`.
    ///   - field: The field at fault, such as `text`.
    ///   - message: What is wrong, for people.
    public init(code: String, field: String, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }
}
