import Foundation

/// The compose limits a draft is validated against, resolved from preferences at the draft's
/// scope (see ``Draft/scope``): a value set for the account, or for one thread, applies.
public struct ComposeRules: Sendable, Hashable {
    /// `compose.maxCharacters`: text plus content warning, in characters as people count them.
    public var maxCharacters: Int
    /// `compose.maxAttachments`.
    public var maxAttachments: Int
    /// `compose.requireAltText`: every attachment needs alt text.
    public var requireAltText: Bool

    /// The preference keys, with their defaults.
    public static let maxCharactersKey = "compose.maxCharacters"
    /// The key of ``maxAttachments``.
    public static let maxAttachmentsKey = "compose.maxAttachments"
    /// The key of ``requireAltText``.
    public static let requireAltTextKey = "compose.requireAltText"
    /// Every key validation depends on: a change to one may change a draft's validation.
    package static let keys = [maxCharactersKey, maxAttachmentsKey, requireAltTextKey]

    /// The defaults: 500 characters, 4 attachments, alt text optional.
    public static let defaults = ComposeRules(maxCharacters: 500, maxAttachments: 4, requireAltText: false)

    /// Rules with every limit given.
    ///
    /// - Parameters:
    ///   - maxCharacters: The most characters of text plus content warning.
    ///   - maxAttachments: The most attachments.
    ///   - requireAltText: Whether every attachment needs alt text.
    public init(maxCharacters: Int, maxAttachments: Int, requireAltText: Bool) {
        self.maxCharacters = maxCharacters
        self.maxAttachments = maxAttachments
        self.requireAltText = requireAltText
    }

    /// The rules from effective preference values (`value(key)`); a missing or ill-typed value
    /// keeps the default.
    package init(resolving value: (String) -> JSONValue?) {
        var rules = Self.defaults
        if case .integer(let number)? = value(Self.maxCharactersKey) { rules.maxCharacters = Int(number) }
        if case .integer(let number)? = value(Self.maxAttachmentsKey) { rules.maxAttachments = Int(number) }
        if case .bool(let flag)? = value(Self.requireAltTextKey) { rules.requireAltText = flag }
        self = rules
    }
}
