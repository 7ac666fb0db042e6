import Foundation

/// A user's unfinished post: text and settings, optionally one of an ordered thread of drafts.
///
/// Every change — to the draft or to one of its attachments — increments ``revision``; an
/// update names the revision it was based on and is refused (`stale_revision`) if the draft has
/// moved on since.
public struct Draft: Codable, Sendable, Hashable, Identifiable {
    /// Who may see the post once published.
    public enum Visibility: String, Codable, Sendable, Hashable, CaseIterable {
        /// Everyone, and it is listed in public timelines.
        case `public`
        /// Everyone, but it is kept out of public timelines.
        case unlisted
        /// Only the author's followers.
        case `private`
        /// Only the people it mentions.
        case direct
    }

    /// A poll attached to the post.
    public struct Poll: Codable, Sendable, Hashable {
        /// The choices, in order.
        public var options: [String]
        /// How long the poll runs, in seconds.
        public var expiresIn: Int
        /// Whether a voter may pick several options.
        public var multiple: Bool

        /// A poll with its choices, running `expiresIn` seconds.
        ///
        /// - Parameters:
        ///   - options: The choices, in order.
        ///   - expiresIn: How long the poll runs, in seconds.
        ///   - multiple: Whether a voter may pick several options.
        public init(options: [String], expiresIn: Int, multiple: Bool = false) {
            self.options = options
            self.expiresIn = expiresIn
            self.multiple = multiple
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case options, expiresIn, multiple
        }

        /// Decodes a poll, refusing unknown fields: a misspelt `multiple` must not pass.
        /// - Parameter decoder: The decoder to read from.
        /// - Throws: ``PrefsError`` `invalid_request` for an unknown field; `DecodingError` for
        ///   a missing or mistyped one.
        public init(from decoder: any Decoder) throws {
            try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a poll")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            options = try container.decode([String].self, forKey: .options)
            expiresIn = try container.decode(Int.self, forKey: .expiresIn)
            multiple = try container.decode(Bool.self, forKey: .multiple)
        }
    }

    /// The draft's id.
    public var id: UUID
    /// The account the draft belongs to; a scope segment (`/accounts/<account>`).
    public var account: String
    /// The thread the draft is part of, if any.
    public var thread: String?
    /// The draft's place in its thread, from 0, dense; nil outside a thread.
    public var position: Int?
    /// The post this one replies to.
    public var replyTo: String?
    /// The text of the post.
    public var text: String
    /// A warning shown in place of the text until the reader opens it.
    public var contentWarning: String?
    /// Who may see the post once published.
    public var visibility: Visibility
    /// A language tag such as `en` or `pt-BR`.
    public var language: String?
    /// Whether its media are hidden until the reader opens them.
    public var sensitive: Bool
    /// Its poll, if any.
    public var poll: Poll?
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// Starts at 1; increments on every change of the draft or its attachments.
    public var revision: Int64
    /// The draft's attachments, by position.
    public var attachments: [Attachment]
    /// The draft this one is a conflicted copy of: sync made it to keep a device's text that
    /// could not be merged with another device's edit of the same words. A person keeps the
    /// version they want and deletes the other.
    public var conflictOf: UUID?
    /// True when the draft was deleted on another device while this one edited it: the edit
    /// brought it back (a delete can be repeated; lost text cannot).
    public var deletedElsewhere: Bool?

    /// A draft with every field given.
    ///
    /// - Parameters:
    ///   - id: The draft's ID.
    ///   - account: The account it belongs to.
    ///   - thread: The thread it is part of, if any.
    ///   - position: Its place in its thread, from 0; nil outside a thread.
    ///   - replyTo: The post it replies to.
    ///   - text: The text of the post.
    ///   - contentWarning: A warning shown in place of the text until the reader opens it.
    ///   - visibility: Who may see the post once published.
    ///   - language: A language tag such as `en` or `pt-BR`.
    ///   - sensitive: Whether its media are hidden until the reader opens them.
    ///   - poll: Its poll, if any.
    ///   - createdAt: When it was created.
    ///   - updatedAt: When it last changed.
    ///   - revision: Its revision (1 for a new draft).
    ///   - attachments: Its attachments, by position.
    ///   - conflictOf: The draft it is a conflicted copy of, if sync made it as one.
    ///   - deletedElsewhere: Whether an edit here brought it back after a delete elsewhere.
    public init(
        id: UUID, account: String, thread: String? = nil, position: Int? = nil, replyTo: String? = nil, text: String = "",
        contentWarning: String? = nil, visibility: Visibility = .public, language: String? = nil, sensitive: Bool = false,
        poll: Poll? = nil, createdAt: Date, updatedAt: Date, revision: Int64 = 1, attachments: [Attachment] = [],
        conflictOf: UUID? = nil, deletedElsewhere: Bool? = nil
    ) {
        self.id = id
        self.account = account
        self.thread = thread
        self.position = position
        self.replyTo = replyTo
        self.text = text
        self.contentWarning = contentWarning
        self.visibility = visibility
        self.language = language
        self.sensitive = sensitive
        self.poll = poll
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.revision = revision
        self.attachments = attachments
        self.conflictOf = conflictOf
        self.deletedElsewhere = deletedElsewhere
    }

    /// The scope the draft's compose preferences resolve at:
    /// `/accounts/<account>/threads/<thread>`, or `/accounts/<account>` outside a thread.
    public var scope: ScopePath {
        get throws {
            let account = try ScopePath.root.appending("accounts").appending(self.account)
            guard let thread else { return account }
            return try account.appending("threads").appending(thread)
        }
    }
}
