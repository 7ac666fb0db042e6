import Foundation

/// A conflict sync resolved: a device's change met an upstream entry that had changed since the
/// revision the change was based on, and the key's ``MergeRule`` (or a refusal) decided what the
/// entry holds. Recorded in the transaction that resolved it, and kept: whatever lost is here,
/// never dropped.
///
/// `GET /v1/conflicts` and `prefsctl conflicts` list them; each is also a `conflict` change in
/// the log (its ``revision``), so watches and history show it.
public struct SyncConflict: Codable, Sendable, Hashable {
    /// One side of a conflict: a value (none: a reset), who made it and when.
    public struct Side: Codable, Sendable, Hashable {
        /// The value (nil: none, a reset).
        public var value: JSONValue?
        /// The device that made it; nil for a change made at the upstream itself.
        public var device: String?
        /// When it was made, by its hybrid logical clock (``SyncStamp``).
        public var stamp: SyncStamp?
        /// The upstream revision that stored it, when it was stored.
        public var revision: Revision?
        /// The device's sequence number of the change, for a device's change.
        public var sequence: Int64?

        /// A side.
        public init(
            value: JSONValue?, device: String? = nil, stamp: SyncStamp? = nil, revision: Revision? = nil, sequence: Int64? = nil
        ) {
            self.value = value
            self.device = device
            self.stamp = stamp
            self.revision = revision
            self.sequence = sequence
        }
    }

    /// What decided a conflict: a key's ``MergeRule`` (`lww`, `max`, `min`, `union`,
    /// `upstream`), or `refused` — the upstream could not apply the device's change at all (a
    /// lock, the key's schema, the device's scope), and its value is kept here.
    public struct Rule: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        /// The rule's name on the wire.
        public var rawValue: String
        /// The rule with this name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The rule a merge rule names.
        public init(_ rule: MergeRule) { rawValue = rule.rawValue }
        public var description: String { rawValue }
        /// The device's change could not be applied; the entry stays as it was.
        public static let refused = Rule(rawValue: "refused")
        /// Two devices' edits of a draft merged: fields both changed decided by stamp, the text
        /// merged. The loser holds the draft as the device pushed it.
        public static let draftMerge = Rule(rawValue: "draft-merge")
        /// Two devices changed the same words of a draft: the upstream kept one text, and the
        /// other is a new draft in the same thread, a conflicted copy of the first.
        public static let conflictedCopy = Rule(rawValue: "conflicted-copy")
        /// A draft was edited on one device and deleted on another: the edit won, and the draft
        /// is back.
        public static let editBeatsDelete = Rule(rawValue: "edit-beats-delete")

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// The revision of the conflict's `conflict` change: its identifier.
    public var revision: Revision
    /// The key; for a draft's conflict, `draft:` and the draft's ID (``draft``).
    public var key: String
    /// The scope of the entry both changes were made at.
    public var scope: ScopePath
    /// What decided it.
    public var rule: Rule
    /// What the entry holds after it.
    public var winner: Side
    /// What lost: the device's change, the upstream's entry, or both (a `union` that kept
    /// neither whole).
    public var losers: [Side]
    /// When it was resolved.
    public var time: Date
    /// Why, in a sentence, where the rule alone does not say (a refusal's reason).
    public var detail: String?

    /// A conflict.
    public init(
        revision: Revision, key: String, scope: ScopePath, rule: Rule, winner: Side, losers: [Side], time: Date,
        detail: String? = nil
    ) {
        self.revision = revision
        self.key = key
        self.scope = scope
        self.rule = rule
        self.winner = winner
        self.losers = losers
        self.time = time
        self.detail = detail
    }
}

extension SyncConflict {
    /// How a draft's conflict's ``key`` begins: `draft:` and the draft's ID.
    public static let draftKeyPrefix = "draft:"

    /// The draft whose conflict this is (its key `draft:<ID>`); nil for a preference's.
    public var draft: UUID? {
        guard key.hasPrefix(Self.draftKeyPrefix) else { return nil }
        return UUID(uuidString: String(key.dropFirst(Self.draftKeyPrefix.count)))
    }
}
