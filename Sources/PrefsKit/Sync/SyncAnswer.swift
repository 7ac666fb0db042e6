import Foundation

/// The upstream's answer to a ``SyncRequest``: what became of each pushed change, and the
/// changes after the replica's cursor within the device's scope (after a snapshot, when the
/// replica needs one).
public struct SyncAnswer: Codable, Sendable, Hashable {
    /// What became of one pushed change.
    public struct Result: Codable, Sendable, Hashable {
        /// How it ended.
        public enum Outcome: String, Codable, Sendable, Hashable {
            /// Applied as it was.
            case applied
            /// It met a newer entry; the key's rule decided (a conflict was recorded).
            case resolved
            /// It had been taken in already: nothing changed now.
            case duplicate
            /// It could not be applied (a lock, the schema, the device's scope); its value is
            /// kept as a conflict's loser.
            case refused
        }

        /// The change's sequence number.
        public var seq: Int64
        /// How it ended.
        public var outcome: Outcome
        /// The entry it was for.
        public var key: String
        /// The entry's scope.
        public var scope: ScopePath
        /// The upstream revision of the entry now: of its value, or of the deletion that removed
        /// it (0: it never had one, or it is beyond the device's reach).
        public var revision: Revision
        /// The entry's value now; nil: none.
        public var value: JSONValue?
        /// The revision of the conflict recorded, if one was.
        public var conflict: Revision?

        /// A result.
        public init(
            seq: Int64, outcome: Outcome, key: String, scope: ScopePath, revision: Revision, value: JSONValue?,
            conflict: Revision? = nil
        ) {
            self.seq = seq
            self.outcome = outcome
            self.key = key
            self.scope = scope
            self.revision = revision
            self.value = value
            self.conflict = conflict
        }
    }

    /// What became of one pushed draft change, and the draft as the upstream has it now.
    public struct DraftResult: Codable, Sendable, Hashable {
        /// The change's sequence number.
        public var seq: Int64
        /// How it ended: `applied` as it was, `resolved` merged with another device's change
        /// (a conflict was recorded), `duplicate` taken in before, `refused` not applied (its
        /// draft is kept as a conflict's loser).
        public var outcome: Result.Outcome
        /// The draft.
        public var id: UUID
        /// The draft's revision at the upstream now; of its deletion if it is gone; 0 if it never
        /// reached the upstream.
        public var revision: Int64
        /// The draft as the upstream has it now, unless it is the one the device pushed (then
        /// only its ``revision`` is news); nil when it is gone — ``deleted`` says which.
        public var draft: Draft?
        /// Whether the draft is gone at the upstream.
        public var deleted: Bool?
        /// When each field of ``draft`` that differs from the pushed draft last changed at the
        /// upstream (sent with ``draft``): a device that changed the draft again meanwhile
        /// rebases that change on it, each field by the later stamp.
        public var stamps: [DraftMerge.Field: SyncStamp]?
        /// The conflicted copy the upstream made of the device's text, when it could not merge it.
        public var copy: Draft?
        /// The revision of the conflict recorded, if one was.
        public var conflict: Revision?

        /// A draft result.
        public init(
            seq: Int64, outcome: Result.Outcome, id: UUID, revision: Int64, draft: Draft?, deleted: Bool? = nil,
            stamps: [DraftMerge.Field: SyncStamp]? = nil, copy: Draft? = nil, conflict: Revision? = nil
        ) {
            self.seq = seq
            self.outcome = outcome
            self.id = id
            self.revision = revision
            self.draft = draft
            self.deleted = deleted
            self.stamps = stamps
            self.copy = copy
            self.conflict = conflict
        }
    }

    /// A draft as the upstream has it, sent because it changed after the replica's cursor.
    public struct DraftState: Codable, Sendable, Hashable {
        /// How the draft's text went from one revision to the next, from a revision the replica
        /// has: sent instead of the text when shorter.
        public struct TextSteps: Codable, Sendable, Hashable {
            /// The revision the first step starts from: the draft's revision as of the replica's
            /// cursor.
            public var from: Int64
            /// One splice per revision after it, up to the state's (an empty one where the text
            /// did not change): a replica whose draft is at a later revision than ``from`` skips
            /// the steps it has.
            public var steps: [TextSplice]

            /// Steps from `from`.
            public init(from: Int64, steps: [TextSplice]) {
                self.from = from
                self.steps = steps
            }
        }

        /// The draft.
        public var id: UUID
        /// Its revision at the upstream; of its deletion if it is gone.
        public var revision: Int64
        /// The draft; nil: deleted. Its text is empty when ``text`` gives it.
        public var draft: Draft?
        /// The draft's text as steps from an earlier revision; nil: the text is ``draft``'s.
        public var text: TextSteps?

        /// A draft's state.
        public init(id: UUID, revision: Int64, draft: Draft?, text: TextSteps? = nil) {
            self.id = id
            self.revision = revision
            self.draft = draft
            self.text = text
        }
    }

    /// One change of the upstream's log, as a replica takes it in.
    public struct Change: Codable, Sendable, Hashable {
        /// The upstream's revision.
        public var revision: Revision
        /// `set`, `reset`, `lock`, `unlock`, `schema` or `conflict`.
        public var kind: ChangeEvent.Kind
        /// The key.
        public var key: String
        /// The scope (none for a schema).
        public var scope: ScopePath?
        /// The value set, the schema registered, or the conflict recorded.
        public var value: JSONValue?
        /// When it was made (a change made at the upstream: its commit time, device empty).
        public var stamp: SyncStamp?
        /// Who made it, as the upstream recorded it.
        public var author: String?
        /// Why, when the writer said.
        public var reason: String?

        /// A change.
        public init(
            revision: Revision, kind: ChangeEvent.Kind, key: String, scope: ScopePath?, value: JSONValue?, stamp: SyncStamp?,
            author: String? = nil, reason: String? = nil
        ) {
            self.revision = revision
            self.kind = kind
            self.key = key
            self.scope = scope
            self.value = value
            self.stamp = stamp
            self.author = author
            self.reason = reason
        }
    }

    /// Every entry within the device's reach at one revision: what a fresh replica, or one whose
    /// cursor fell behind the log's compaction, starts again from.
    public struct Snapshot: Codable, Sendable, Hashable {
        /// A value at a scope, with the upstream revision that set it.
        public struct Value: Codable, Sendable, Hashable {
            public var key: String
            public var scope: ScopePath
            public var value: JSONValue
            public var revision: Revision

            /// A value.
            public init(key: String, scope: ScopePath, value: JSONValue, revision: Revision) {
                self.key = key
                self.scope = scope
                self.value = value
                self.revision = revision
            }
        }

        /// A lock at a scope.
        public struct Lock: Codable, Sendable, Hashable {
            public var key: String
            public var scope: ScopePath
            public var revision: Revision

            /// A lock.
            public init(key: String, scope: ScopePath, revision: Revision) {
                self.key = key
                self.scope = scope
                self.revision = revision
            }
        }

        /// The revision it shows.
        public var revision: Revision
        /// The values at the device's scope, below it, and above it (which resolve there).
        public var values: [Value]
        /// The locks there.
        public var locks: [Lock]
        /// Every key's schema.
        public var schemas: [String: PreferenceSchema]
        /// The drafts of the accounts within the device's reach (nil: none).
        public var drafts: [Draft]?

        /// A snapshot.
        public init(
            revision: Revision, values: [Value], locks: [Lock], schemas: [String: PreferenceSchema], drafts: [Draft]? = nil
        ) {
            self.revision = revision
            self.values = values
            self.locks = locks
            self.schemas = schemas
            self.drafts = drafts
        }
    }

    /// The device: the token's name.
    public var device: String
    /// What the token may do.
    public var role: AccessRole
    /// Where.
    public var scope: ScopePath
    /// What became of each pushed change, in order.
    public var results: [Result]
    /// What became of each pushed draft change, in order (nil: none was pushed).
    public var draftResults: [DraftResult]?
    /// Where to start again from, when the replica needs it; the ``changes`` follow it.
    public var snapshot: Snapshot?
    /// The changes after the cursor (or the snapshot) within the device's reach, in order.
    public var changes: [Change]
    /// The drafts within the device's reach that changed after the cursor, as they are now
    /// (nil: none did).
    public var drafts: [DraftState]?
    /// The revision the replica has everything up to once it takes this answer in: its next
    /// cursor.
    public var cursor: Revision
    /// Whether more changes follow ``cursor`` already: exchange again at once.
    public var more: Bool?
    /// The upstream's newest revision as it answered: the replica is in step once its cursor
    /// reaches it (changes beyond its reach move it too).
    public var newest: Revision

    /// An answer.
    public init(
        device: String, role: AccessRole, scope: ScopePath, results: [Result], draftResults: [DraftResult]? = nil,
        snapshot: Snapshot?, changes: [Change], drafts: [DraftState]? = nil, cursor: Revision, more: Bool? = nil,
        newest: Revision
    ) {
        self.device = device
        self.role = role
        self.scope = scope
        self.results = results
        self.draftResults = draftResults
        self.snapshot = snapshot
        self.changes = changes
        self.drafts = drafts
        self.cursor = cursor
        self.more = more
        self.newest = newest
    }
}
