/// One exchange a replica starts with its upstream (`POST /v1/sync`, one round trip): the
/// changes it pushes, and the cursor it pulls after.
///
/// The device is the named token the request is made with; its scope bounds what it may push
/// and what it is sent.
public struct SyncRequest: Codable, Sendable, Hashable {
    /// A change made on the device, pushed: the upstream applies it once only (by device and
    /// ``seq``), and resolves it by the key's ``MergeRule`` when the entry changed since
    /// ``base``.
    public struct Mutation: Codable, Sendable, Hashable {
        /// The device's sequence number: increasing, never reused. The upstream keeps the
        /// highest it took in from each device, and answers a repeat as `duplicate`.
        public var seq: Int64
        /// The key.
        public var key: String
        /// The scope the value was set or reset at.
        public var scope: ScopePath
        /// The value set; nil for a reset.
        public var value: JSONValue?
        /// The upstream revision the change was based on: the device had taken in every change
        /// of the entry at ``key`` and ``scope`` up to it (its cursor, or the entry's revision
        /// it knows if later; 0: none). The upstream applies the change when the entry has not
        /// changed since, and resolves it by the key's rule against the entry's last change —
        /// a value or a deletion — when it has.
        public var base: Revision
        /// The value the device showed at the entry when the change was made (nil: none) — the
        /// upstream's as last taken in, or the device's own change not yet answered — for rules
        /// that merge (`union`: what the change added and removed is measured from it).
        public var baseValue: JSONValue?
        /// When the change was made, by the device's hybrid logical clock (its device part is
        /// left empty: the upstream fills in the token's name).
        public var stamp: SyncStamp
        /// Made before the replica had taken its first snapshot: applied only where the
        /// upstream has no entry, never over one.
        public var ifAbsent: Bool?
        /// Who made it on the device (`user (program)`), carried into the upstream's audit log.
        public var author: String?
        /// Why, when the writer said.
        public var reason: String?

        /// A pushed change.
        public init(
            seq: Int64, key: String, scope: ScopePath, value: JSONValue?, base: Revision, baseValue: JSONValue? = nil,
            stamp: SyncStamp, ifAbsent: Bool? = nil, author: String? = nil, reason: String? = nil
        ) {
            self.seq = seq
            self.key = key
            self.scope = scope
            self.value = value
            self.base = base
            self.baseValue = baseValue
            self.stamp = stamp
            self.ifAbsent = ifAbsent
            self.author = author
            self.reason = reason
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case seq, key, scope, value, base, baseValue, stamp, ifAbsent, author, reason
        }

        /// Decodes a pushed change as strictly as every request body: no unknown field, no
        /// `null` for a field that may only be absent (a reset has no `value`; `null` is no
        /// value to set), a valid key (`invalid_key`) and a base of 0 or more.
        public init(from decoder: any Decoder) throws {
            try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a pushed change")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            seq = try container.decode(Int64.self, forKey: .seq)
            key = try container.decode(String.self, forKey: .key)
            try KeyName.validate(key)
            scope = try container.decode(ScopePath.self, forKey: .scope)
            value = try container.decodeUnlessAbsent(JSONValue.self, forKey: .value)
            if value == .null {
                throw PrefsError(.invalidValue, "A pushed change's value is never null: a reset has no \"value\".")
            }
            base = try container.decode(Revision.self, forKey: .base)
            guard base >= 0 else { throw PrefsError(.invalidRequest, "A pushed change's base is a revision, 0 or more, not \(base).") }
            baseValue = try container.decodeUnlessAbsent(JSONValue.self, forKey: .baseValue)
            stamp = try container.decode(SyncStamp.self, forKey: .stamp)
            ifAbsent = try container.decodeUnlessAbsent(Bool.self, forKey: .ifAbsent)
            author = try container.decodeUnlessAbsent(String.self, forKey: .author)
            reason = try container.decodeUnlessAbsent(String.self, forKey: .reason)
        }
    }

    /// The upstream revision the replica has taken in everything up to (0: nothing yet, send a
    /// snapshot).
    public var cursor: Revision
    /// The device's preference changes, in sequence order.
    public var mutations: [Mutation]
    /// The device's draft changes, in sequence order (the series ``mutations`` share): at most
    /// one per draft, whose answer the next change of that draft waits for.
    public var drafts: [DraftMutation]
    /// Encodes the exchange, leaving out `drafts` when there are none (as a device without
    /// drafts, or an older one, sends it).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(mutations, forKey: .mutations)
        if !drafts.isEmpty { try container.encode(drafts, forKey: .drafts) }
        try container.encodeIfPresent(wait, forKey: .wait)
    }

    /// How long the upstream may hold the answer, in milliseconds, while it has nothing to send
    /// (a long poll); 0 or nil: answer at once.
    public var wait: Int?

    /// An exchange.
    public init(cursor: Revision, mutations: [Mutation] = [], drafts: [DraftMutation] = [], wait: Int? = nil) {
        self.cursor = cursor
        self.mutations = mutations
        self.drafts = drafts
        self.wait = wait
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case cursor, mutations, drafts, wait
    }

    /// Decodes an exchange as strictly as every request body: no unknown field, no `null` for a
    /// field that may only be absent; `mutations` and `drafts` empty when absent.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a sync request")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        cursor = try container.decode(Revision.self, forKey: .cursor)
        mutations = try container.decodeUnlessAbsent([Mutation].self, forKey: .mutations) ?? []
        drafts = try container.decodeUnlessAbsent([DraftMutation].self, forKey: .drafts) ?? []
        wait = try container.decodeUnlessAbsent(Int.self, forKey: .wait)
    }
}
