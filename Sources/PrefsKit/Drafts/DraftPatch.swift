import Foundation

/// What updating a draft takes (`PATCH /v1/drafts/{id}`): only the fields to change; `null`
/// clears an optional field. Unknown fields are refused, so a typo never passes silently.
public struct DraftPatch: Codable, Sendable, Hashable {
    /// New text.
    public var text: FieldChange<String> = .unchanged
    /// Moves the draft to another thread (`null`: out of any thread).
    public var thread: FieldChange<String> = .unchanged
    /// Its new place in its (new) thread.
    public var position: FieldChange<Int> = .unchanged
    /// The post it replies to.
    public var replyTo: FieldChange<String> = .unchanged
    /// A new content warning, or none.
    public var contentWarning: FieldChange<String> = .unchanged
    /// Who may see it once published.
    public var visibility: FieldChange<Draft.Visibility> = .unchanged
    /// A language tag, or none.
    public var language: FieldChange<String> = .unchanged
    /// Whether its media are hidden until opened.
    public var sensitive: FieldChange<Bool> = .unchanged
    /// A new poll, or none.
    public var poll: FieldChange<Draft.Poll> = .unchanged

    /// A patch that changes nothing yet: set the fields to change.
    public init() {}

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case text, thread, position, replyTo, contentWarning, visibility, language, sensitive, poll
    }

    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a draft change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func field<T: Decodable & Sendable & Hashable>(_ key: CodingKeys) throws -> FieldChange<T> {
            guard container.contains(key) else { return .unchanged }
            if try container.decodeNil(forKey: key) { return .clear }
            return .set(try container.decode(T.self, forKey: key))
        }
        text = try field(.text)
        thread = try field(.thread)
        position = try field(.position)
        replyTo = try field(.replyTo)
        contentWarning = try field(.contentWarning)
        visibility = try field(.visibility)
        language = try field(.language)
        sensitive = try field(.sensitive)
        poll = try field(.poll)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func field<T: Encodable & Sendable & Hashable>(_ change: FieldChange<T>, _ key: CodingKeys) throws {
            switch change {
            case .unchanged: break
            case .clear: try container.encodeNil(forKey: key)
            case .set(let value): try container.encode(value, forKey: key)
            }
        }
        try field(text, .text)
        try field(thread, .thread)
        try field(position, .position)
        try field(replyTo, .replyTo)
        try field(contentWarning, .contentWarning)
        try field(visibility, .visibility)
        try field(language, .language)
        try field(sensitive, .sensitive)
        try field(poll, .poll)
    }
}
