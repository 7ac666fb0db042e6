import Foundation

/// One committed change as the audit log shows it: what changed, when, who made it and why.
///
/// A draft's change names the draft, its account and thread, never its text or an attachment's
/// bytes.
public struct ChangeRecord: Sendable, Hashable {
    /// The change's revision.
    public var revision: Revision
    /// When it was committed.
    public var time: Date
    /// What happened.
    public var kind: ChangeEvent.Kind
    /// The preference key changed, for preference changes.
    public var key: String?
    /// The scope the change was made at.
    public var scope: ScopePath?
    /// The value set (`set`), or the schema registered (`schema`).
    public var value: JSONValue?
    /// What the change replaced: the value (`set`, `reset`) or schema before it.
    public var oldValue: JSONValue?
    /// The draft changed, for draft changes.
    public var draft: String?
    /// The attachment changed, for attachment changes.
    public var attachment: String?
    /// The draft's account.
    public var account: String?
    /// The draft's thread.
    public var thread: String?
    /// Who made it.
    public var author: ChangeAuthor
    /// Why, when the writer said (`Prefs-Reason`, `--reason`).
    public var reason: String?

    /// A record with every field given.
    ///
    /// - Parameters:
    ///   - revision: The change's revision.
    ///   - time: When it was committed.
    ///   - kind: What happened.
    ///   - key: The preference key changed.
    ///   - scope: The scope it was made at.
    ///   - value: The value set, or the schema registered.
    ///   - oldValue: What it replaced.
    ///   - draft: The draft changed.
    ///   - attachment: The attachment changed.
    ///   - account: The draft's account.
    ///   - thread: The draft's thread.
    ///   - author: Who made it.
    ///   - reason: Why.
    public init(
        revision: Revision, time: Date, kind: ChangeEvent.Kind, key: String? = nil, scope: ScopePath? = nil,
        value: JSONValue? = nil, oldValue: JSONValue? = nil, draft: String? = nil, attachment: String? = nil,
        account: String? = nil, thread: String? = nil, author: ChangeAuthor, reason: String? = nil
    ) {
        self.revision = revision
        self.time = time
        self.kind = kind
        self.key = key
        self.scope = scope
        self.value = value
        self.oldValue = oldValue
        self.draft = draft
        self.attachment = attachment
        self.account = account
        self.thread = thread
        self.author = author
        self.reason = reason
    }
}

extension ChangeRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case revision, time, kind, key, scope, value, oldValue, draft, attachment, account, thread, author, agent, host,
            reason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        revision = try container.decode(Revision.self, forKey: .revision)
        time = try container.decode(Date.self, forKey: .time)
        kind = try container.decode(ChangeEvent.Kind.self, forKey: .kind)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        scope = try container.decodeIfPresent(ScopePath.self, forKey: .scope)
        value = try container.decodeIfPresent(JSONValue.self, forKey: .value)
        oldValue = try container.decodeIfPresent(JSONValue.self, forKey: .oldValue)
        draft = try container.decodeIfPresent(String.self, forKey: .draft)
        attachment = try container.decodeIfPresent(String.self, forKey: .attachment)
        account = try container.decodeIfPresent(String.self, forKey: .account)
        thread = try container.decodeIfPresent(String.self, forKey: .thread)
        author = ChangeAuthor(
            name: try container.decode(String.self, forKey: .author),
            agent: try container.decodeIfPresent(String.self, forKey: .agent),
            host: try container.decodeIfPresent(String.self, forKey: .host))
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(revision, forKey: .revision)
        try container.encode(time, forKey: .time)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(key, forKey: .key)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(oldValue, forKey: .oldValue)
        try container.encodeIfPresent(draft, forKey: .draft)
        try container.encodeIfPresent(attachment, forKey: .attachment)
        try container.encodeIfPresent(account, forKey: .account)
        try container.encodeIfPresent(thread, forKey: .thread)
        try container.encode(author.name, forKey: .author)
        try container.encodeIfPresent(author.agent, forKey: .agent)
        try container.encodeIfPresent(author.host, forKey: .host)
        try container.encodeIfPresent(reason, forKey: .reason)
    }
}
