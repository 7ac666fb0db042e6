import Foundation

/// What creating a draft takes (`POST /v1/drafts`). Only `account` is required.
public struct DraftInput: Codable, Sendable, Hashable {
    /// The account it belongs to.
    public var account: String
    /// The text of the post (default: empty).
    public var text: String?
    /// The thread to put it in, if any.
    public var thread: String?
    /// Where in the thread (default: at the end).
    public var position: Int?
    /// The post it replies to.
    public var replyTo: String?
    /// A warning shown in place of the text.
    public var contentWarning: String?
    /// Who may see it once published (default: public).
    public var visibility: Draft.Visibility?
    /// A language tag such as `en`.
    public var language: String?
    /// Whether its media are hidden until opened (default: false).
    public var sensitive: Bool?
    /// A poll.
    public var poll: Draft.Poll?

    /// A new draft's fields; only `account` is required.
    ///
    /// - Parameters:
    ///   - account: The account it belongs to.
    ///   - text: The text of the post (default: empty).
    ///   - thread: The thread to put it in, if any.
    ///   - position: Where in the thread (default: at the end).
    ///   - replyTo: The post it replies to.
    ///   - contentWarning: A warning shown in place of the text.
    ///   - visibility: Who may see it once published (default: public).
    ///   - language: A language tag such as `en`.
    ///   - sensitive: Whether its media are hidden until opened (default: false).
    ///   - poll: A poll.
    public init(
        account: String, text: String? = nil, thread: String? = nil, position: Int? = nil, replyTo: String? = nil,
        contentWarning: String? = nil, visibility: Draft.Visibility? = nil, language: String? = nil,
        sensitive: Bool? = nil, poll: Draft.Poll? = nil
    ) {
        self.account = account
        self.text = text
        self.thread = thread
        self.position = position
        self.replyTo = replyTo
        self.contentWarning = contentWarning
        self.visibility = visibility
        self.language = language
        self.sensitive = sensitive
        self.poll = poll
    }

    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a new draft")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        account = try container.decode(String.self, forKey: .account)
        text = try container.decodeUnlessAbsent(String.self, forKey: .text)
        thread = try container.decodeUnlessAbsent(String.self, forKey: .thread)
        position = try container.decodeUnlessAbsent(Int.self, forKey: .position)
        replyTo = try container.decodeUnlessAbsent(String.self, forKey: .replyTo)
        contentWarning = try container.decodeUnlessAbsent(String.self, forKey: .contentWarning)
        visibility = try container.decodeUnlessAbsent(Draft.Visibility.self, forKey: .visibility)
        language = try container.decodeUnlessAbsent(String.self, forKey: .language)
        sensitive = try container.decodeUnlessAbsent(Bool.self, forKey: .sensitive)
        poll = try container.decodeUnlessAbsent(Draft.Poll.self, forKey: .poll)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case account, text, thread, position, replyTo, contentWarning, visibility, language, sensitive, poll
    }
}

/// Refusing unknown fields in request bodies.
enum StrictFields {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func check(_ decoder: any Decoder, allowed: [String], in what: String) throws {
        let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).filter { !allowed.contains($0) }
        if let first = unknown.sorted().first {
            throw PrefsError(
                .invalidRequest, "Unknown field '\(first)' in \(what); the fields are \(allowed.joined(separator: ", ")).")
        }
    }
}
