import Foundation

/// What creating a draft takes (`POST /v1/drafts`). Only `account` is required.
public struct DraftInput: Codable, Sendable, Hashable {
    public var account: String
    public var text: String?
    public var thread: String?
    /// Where in the thread (default: at the end).
    public var position: Int?
    public var replyTo: String?
    public var contentWarning: String?
    public var visibility: Draft.Visibility?
    public var language: String?
    public var sensitive: Bool?
    public var poll: Draft.Poll?

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
        text = try container.decodeIfPresent(String.self, forKey: .text)
        thread = try container.decodeIfPresent(String.self, forKey: .thread)
        position = try container.decodeIfPresent(Int.self, forKey: .position)
        replyTo = try container.decodeIfPresent(String.self, forKey: .replyTo)
        contentWarning = try container.decodeIfPresent(String.self, forKey: .contentWarning)
        visibility = try container.decodeIfPresent(Draft.Visibility.self, forKey: .visibility)
        language = try container.decodeIfPresent(String.self, forKey: .language)
        sensitive = try container.decodeIfPresent(Bool.self, forKey: .sensitive)
        poll = try container.decodeIfPresent(Draft.Poll.self, forKey: .poll)
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case account, text, thread, position, replyTo, contentWarning, visibility, language, sensitive, poll
    }
}

/// A change to one field of a patch: leave it, clear it (JSON `null`), or set it.
public enum FieldChange<Value: Sendable & Hashable>: Sendable, Hashable {
    case unchanged
    case clear
    case set(Value)

    /// The field's new value given its old one.
    public func applied(to old: Value?) -> Value? {
        switch self {
        case .unchanged: old
        case .clear: nil
        case .set(let value): value
        }
    }
}

/// What updating a draft takes (`PATCH /v1/drafts/{id}`): only the fields to change; `null`
/// clears an optional field. Unknown fields are refused, so a typo never passes silently.
public struct DraftPatch: Codable, Sendable, Hashable {
    public var text: FieldChange<String> = .unchanged
    /// Moves the draft to another thread (`null`: out of any thread).
    public var thread: FieldChange<String> = .unchanged
    /// Its new place in its (new) thread.
    public var position: FieldChange<Int> = .unchanged
    public var replyTo: FieldChange<String> = .unchanged
    public var contentWarning: FieldChange<String> = .unchanged
    public var visibility: FieldChange<Draft.Visibility> = .unchanged
    public var language: FieldChange<String> = .unchanged
    public var sensitive: FieldChange<Bool> = .unchanged
    public var poll: FieldChange<Draft.Poll> = .unchanged

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

/// What changing an attachment takes (`PATCH /v1/drafts/{id}/attachments/{aid}`).
public struct AttachmentPatch: Codable, Sendable, Hashable {
    public var altText: FieldChange<String> = .unchanged
    /// Its new place among the draft's attachments.
    public var position: FieldChange<Int> = .unchanged

    public init(altText: FieldChange<String> = .unchanged, position: FieldChange<Int> = .unchanged) {
        self.altText = altText
        self.position = position
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case altText, position
    }

    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "an attachment change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.altText) {
            altText = try container.decodeNil(forKey: .altText) ? .clear : .set(try container.decode(String.self, forKey: .altText))
        }
        if container.contains(.position) {
            guard !(try container.decodeNil(forKey: .position)) else {
                throw PrefsError(.invalidRequest, "An attachment's position cannot be null.")
            }
            position = .set(try container.decode(Int.self, forKey: .position))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch altText {
        case .unchanged: break
        case .clear: try container.encodeNil(forKey: .altText)
        case .set(let text): try container.encode(text, forKey: .altText)
        }
        if case .set(let position) = position { try container.encode(position, forKey: .position) }
    }
}

/// What uploading an attachment says about the file (`POST …/attachments?filename=&kind=&alt=`).
public struct AttachmentUpload: Sendable, Hashable {
    /// The name the client gave; sanitised before it is stored.
    public var filename: String
    /// The kind; the MIME type's when absent.
    public var kind: Attachment.Kind?
    /// The MIME type; when absent, the image format the bytes show, else guessed from the file
    /// name (see ``AttachmentMedia``).
    public var mimeType: String?
    public var altText: String?

    public init(filename: String, kind: Attachment.Kind? = nil, mimeType: String? = nil, altText: String? = nil) {
        self.filename = filename
        self.kind = kind
        self.mimeType = mimeType
        self.altText = altText
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
