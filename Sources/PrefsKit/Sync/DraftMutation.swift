import Foundation

/// A change of a draft made on a device, pushed in a ``SyncRequest``: the draft as the device
/// has it after the change (none: deleted there), the upstream revision of the draft the device
/// had taken in when it made it, and when the device changed each field since then.
///
/// The upstream takes it in once only (by device and ``seq``, which it shares with the device's
/// preference changes). Where the draft has not changed since ``base``, the device's draft is
/// applied as it is; where it has, the two are merged (``DraftMerge``): fields by stamp, the text
/// by a three-way merge, the attachments as a set — and text that cannot be merged becomes a
/// conflicted copy. An edit beats a delete, whichever side made which.
public struct DraftMutation: Codable, Sendable, Hashable {
    /// The device's sequence number, from the same series as its preference changes.
    public var seq: Int64
    /// The draft's ID.
    public var id: UUID
    /// The draft's revision at the upstream (``Draft/revision`` there) that the change was made
    /// on: the device had taken in the draft at it; 0: the draft was made on the device and never
    /// synced.
    public var base: Int64
    /// The draft as the device has it; nil: the device deleted it. Its text is empty when
    /// ``textEdit`` gives it.
    public var draft: Draft?
    /// The draft's text as the splice that makes it from the text of its revision ``base`` (which
    /// both sides have): sent instead of the text when shorter. Nil: the text is ``draft``'s.
    public var textEdit: TextSplice?
    /// When the device last changed the draft (its delete, for a delete).
    public var stamp: SyncStamp
    /// When the device changed each field since ``base``: a field without a stamp is as the
    /// device took it in.
    public var stamps: [DraftMerge.Field: SyncStamp]
    /// Who made it on the device (`user (program)`), carried into the upstream's audit log.
    public var author: String?
    /// Why, when the writer said.
    public var reason: String?

    /// A pushed draft change.
    public init(
        seq: Int64, id: UUID, base: Int64, draft: Draft?, textEdit: TextSplice? = nil, stamp: SyncStamp,
        stamps: [DraftMerge.Field: SyncStamp] = [:], author: String? = nil, reason: String? = nil
    ) {
        self.seq = seq
        self.id = id
        self.base = base
        self.draft = draft
        self.textEdit = textEdit
        self.stamp = stamp
        self.stamps = stamps
        self.author = author
        self.reason = reason
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case seq, id, base, draft, textEdit, stamp, stamps, author, reason
    }

    /// Decodes a pushed draft change as strictly as every request body: no unknown field, a
    /// draft whose ID is the change's, a base of 0 or more.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a pushed draft change")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(Int64.self, forKey: .seq)
        id = try container.decode(UUID.self, forKey: .id)
        base = try container.decode(Int64.self, forKey: .base)
        guard base >= 0 else { throw PrefsError(.invalidRequest, "A pushed draft change's base is a revision, 0 or more, not \(base).") }
        draft = try container.decodeUnlessAbsent(Draft.self, forKey: .draft)
        if let draft, draft.id != id {
            throw PrefsError(.invalidRequest, "A pushed draft change for \(id.uuidString) carries draft \(draft.id.uuidString).")
        }
        textEdit = try container.decodeUnlessAbsent(TextSplice.self, forKey: .textEdit)
        if textEdit != nil, draft == nil || base == 0 {
            throw PrefsError(.invalidRequest, "A text edit needs a draft and the revision it was made on (a base above 0).")
        }
        stamp = try container.decode(SyncStamp.self, forKey: .stamp)
        stamps = try container.decodeUnlessAbsent([DraftMerge.Field: SyncStamp].self, forKey: .stamps) ?? [:]
        author = try container.decodeUnlessAbsent(String.self, forKey: .author)
        reason = try container.decodeUnlessAbsent(String.self, forKey: .reason)
    }
}

extension DraftMerge.Field: CodingKeyRepresentable {}

extension DraftMutation {
    /// The change as it goes on the wire: its text as a splice of `baseText` (the text of its
    /// ``base``, as the device took it in) where that is shorter.
    public func sendingText(asEditOf baseText: String) -> DraftMutation {
        guard let draft, textEdit == nil, base > 0 else { return self }
        let splice = TextSplice(from: baseText, to: draft.text)
        guard splice.insert.utf8.count + 32 < draft.text.utf8.count else { return self }
        var sent = self
        sent.draft?.text = ""
        sent.textEdit = splice
        return sent
    }
}
