import Foundation

/// A committed change, or a notice about the watch itself, as watchers receive it.
///
/// Over HTTP it is one Server-Sent Event: `id:` the revision, `event:` the ``kind``, `data:` this
/// value as JSON.
public struct ChangeEvent: Codable, Sendable, Hashable {
    /// What happened.
    public struct Kind: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        /// The kind's name on the wire, e.g. `set`.
        public var rawValue: String
        /// The kind with this name.
        ///
        /// - Parameter rawValue: The kind's name on the wire, such as `set`.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A value was set.
        public static let set = Kind(rawValue: "set")
        /// A value was removed.
        public static let reset = Kind(rawValue: "reset")
        /// A key was locked at a scope.
        public static let lock = Kind(rawValue: "lock")
        /// A lock was removed.
        public static let unlock = Kind(rawValue: "unlock")
        /// A key's schema was registered or replaced.
        public static let schema = Kind(rawValue: "schema")
        /// A draft was created.
        public static let draftCreated = Kind(rawValue: "draft.created")
        /// A draft's fields changed (or its place in a thread).
        public static let draftUpdated = Kind(rawValue: "draft.updated")
        /// A draft was deleted, with its attachments.
        public static let draftDeleted = Kind(rawValue: "draft.deleted")
        /// An attachment was added to a draft.
        public static let attachmentAdded = Kind(rawValue: "attachment.added")
        /// An attachment's alt text or position changed.
        public static let attachmentUpdated = Kind(rawValue: "attachment.updated")
        /// An attachment was removed.
        public static let attachmentRemoved = Kind(rawValue: "attachment.removed")
        /// A draft's validation changed because a compose preference changed (the draft did not).
        public static let validation = Kind(rawValue: "validation")
        /// Sync resolved a conflict on a key at a scope: ``ChangeEvent/value`` is the
        /// ``SyncConflict`` recorded (winner, losers, rule). The entry's new value, if it changed,
        /// is a change of its own.
        public static let conflict = Kind(rawValue: "conflict")
        /// A named token was created (the audit log's; no watch is told).
        public static let tokenCreated = Kind(rawValue: "token.created")
        /// A named token was revoked (the audit log's; no watch is told).
        public static let tokenRevoked = Kind(rawValue: "token.revoked")
        /// No change: the store's current revision, sent on quiet watches so they can resume cheaply.
        public static let progress = Kind(rawValue: "progress")
        /// The watcher fell too far behind and the watch ends; resume from ``ChangeEvent/revision``.
        public static let overflow = Kind(rawValue: "overflow")
        /// The daemon is stopping and the watch ends; resume from ``ChangeEvent/revision``.
        public static let shutdown = Kind(rawValue: "shutdown")
        /// The token the watch was opened with was revoked at ``ChangeEvent/revision``, and the
        /// watch ends.
        public static let revoked = Kind(rawValue: "revoked")

        /// Whether this kind is a notice about the watch rather than a change.
        public var isNotice: Bool { self == .progress || self == .overflow || self == .shutdown || self == .revoked }

        /// Whether this kind is a change of named tokens.
        public var isTokenChange: Bool { self == .tokenCreated || self == .tokenRevoked }
    }

    /// The change's revision (for notices: the last revision the watcher has everything up to).
    public var revision: Revision
    /// What happened.
    public var kind: Kind
    /// The preference key changed, for preference events.
    public var key: String?
    /// The scope the change was made at; for a scoped watch, the watched scope.
    public var scope: ScopePath?
    /// The new value; for a scoped watch, the new effective value at the watched scope.
    public var value: JSONValue?
    /// For a scoped watch, where the new effective value comes from.
    public var source: PreferenceSource?
    /// The draft changed, for draft events.
    public var draft: String?
    /// The attachment changed, for attachment events.
    public var attachment: String?
    /// For draft events: the draft's account.
    public var account: String?
    /// The draft's thread, if it is in one.
    public var thread: String?
    /// For a draft moved between threads: the thread it left.
    public var previousThread: String?
    /// The draft's revision after the change.
    public var draftRevision: Int64?
    /// For draft events seen by draft, thread and account watches: the draft's validation.
    public var valid: Bool?

    /// An event with every field given.
    ///
    /// - Parameters:
    ///   - revision: The change's revision (for notices: the last revision the watcher has
    ///     everything up to).
    ///   - kind: What happened.
    ///   - key: The preference key changed, for preference events.
    ///   - scope: The scope the change was made at; for a scoped watch, the watched scope.
    ///   - value: The new value; for a scoped watch, the new effective value there.
    ///   - source: For a scoped watch, where the new effective value comes from.
    ///   - draft: The draft changed, for draft events.
    ///   - attachment: The attachment changed, for attachment events.
    ///   - account: For draft events: the draft's account.
    ///   - thread: The draft's thread, if it is in one.
    ///   - previousThread: For a draft moved between threads: the thread it left.
    ///   - draftRevision: The draft's revision after the change.
    ///   - valid: For draft events: whether the draft can be published.
    public init(
        revision: Revision, kind: Kind, key: String? = nil, scope: ScopePath? = nil, value: JSONValue? = nil,
        source: PreferenceSource? = nil, draft: String? = nil, attachment: String? = nil, account: String? = nil,
        thread: String? = nil, previousThread: String? = nil, draftRevision: Int64? = nil, valid: Bool? = nil
    ) {
        self.revision = revision
        self.kind = kind
        self.key = key
        self.scope = scope
        self.value = value
        self.source = source
        self.draft = draft
        self.attachment = attachment
        self.account = account
        self.thread = thread
        self.previousThread = previousThread
        self.draftRevision = draftRevision
        self.valid = valid
    }

    /// Whether this is a change of a draft or its attachments.
    public var isDraftChange: Bool { draft != nil }
}
