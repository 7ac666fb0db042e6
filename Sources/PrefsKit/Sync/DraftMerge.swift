/// Two devices' edits of one draft, merged as sync merges them: each field on its own — the
/// side that changed it, or, where both did differently, the later stamp — the text by a
/// three-way merge of its words (``ThreeWayMerge/mergeText(base:ours:theirs:)``), and the
/// attachments as a set, both sides' additions and removals kept, each attachment's alt text and
/// position on their own.
///
/// Nothing typed is lost: text that cannot be merged (both sides changed the same words) stays
/// the upstream's in the merged draft, and the device's is ``conflictedText``, for a conflicted
/// copy of the draft in the same thread.
///
/// ```swift
/// let merge = DraftMerge(base: synced, upstream: .init(draft: there, stamps: upstreamStamps),
///                        device: .init(draft: here, stamps: deviceStamps))
/// store(merge.merged)
/// if let text = merge.conflictedText { storeCopy(of: merge.merged, text: text) }
/// ```
public struct DraftMerge: Sendable, Hashable {
    /// What sync merges of a draft, each on its own.
    public enum Field: String, Sendable, Hashable, CaseIterable, Codable {
        case text, contentWarning, visibility, language, sensitive, replyTo, poll, thread, position
        /// The attachments' alt texts and positions: where both sides changed one, the later
        /// stamp of this field decides.
        case attachments
    }

    /// One side's edit: the draft as that side has it, and when each field last changed there.
    public struct Side: Sendable, Hashable {
        /// The draft as this side has it.
        public var draft: Draft
        /// The stamp of each field's last change on this side; a field without one counts as
        /// older than any with one.
        public var stamps: [Field: SyncStamp]

        /// A side with `draft`, its fields changed at `stamps`.
        public init(draft: Draft, stamps: [Field: SyncStamp] = [:]) {
            self.draft = draft
            self.stamps = stamps
        }
    }

    /// The draft merged: the upstream's, with what the device changed that the upstream did not,
    /// and what both changed decided by stamp.
    public var merged: Draft
    /// The device's text where it could not be merged with the upstream's (nil where it could):
    /// what a conflicted copy of the draft holds.
    public var conflictedText: String?
    /// The fields both sides changed differently, in ``Field``'s order: each kept the later
    /// stamp's value (the text, the upstream's).
    public var contested: [Field]

    /// Merges `upstream` and `device`, both edits of `base`, the draft as both last had it.
    public init(base: Draft, upstream: Side, device: Side) {
        var merger = Merger(base: base, upstream: upstream, device: device)
        merger.pick(.contentWarning, \.contentWarning)
        merger.pick(.visibility, \.visibility)
        merger.pick(.language, \.language)
        merger.pick(.sensitive, \.sensitive)
        merger.pick(.replyTo, \.replyTo)
        merger.pick(.poll, \.poll)
        merger.pick(.thread, \.thread)
        merger.pick(.position, \.position)
        if let text = ThreeWayMerge.mergeText(base: base.text, ours: upstream.draft.text, theirs: device.draft.text) {
            merger.merged.text = text
        } else {
            conflictedText = device.draft.text
            merger.contested.insert(.text)
        }
        merger.mergeAttachments()
        merger.merged.updatedAt = max(upstream.draft.updatedAt, device.draft.updatedAt)
        merged = merger.merged
        contested = Field.allCases.filter(merger.contested.contains)
    }

    /// The merge under way.
    private struct Merger {
        let base: Draft
        let upstream: Side
        let device: Side
        var merged: Draft
        var contested: Set<Field> = []

        init(base: Draft, upstream: Side, device: Side) {
            (self.base, self.upstream, self.device, merged) = (base, upstream, device, upstream.draft)
        }

        /// Whether the device's change of `field` is later than the upstream's.
        func deviceIsLater(_ field: Field) -> Bool {
            let none = SyncStamp(milliseconds: 0, counter: 0, device: "")
            return device.stamps[field] ?? none > upstream.stamps[field] ?? none
        }

        /// Of `base`, `upstream` and `device`: the value a side changed, or, where both changed it
        /// differently, the later stamp's of `field` (which is then contested).
        mutating func resolve<Value: Equatable>(_ field: Field, base: Value, upstream: Value, device: Value) -> Value {
            if device == base || device == upstream { return upstream }
            if upstream == base { return device }
            contested.insert(field)
            return deviceIsLater(field) ? device : upstream
        }

        /// Resolves the draft's `field` at `keyPath`.
        mutating func pick<Value: Equatable>(_ field: Field, _ keyPath: WritableKeyPath<Draft, Value>) {
            merged[keyPath: keyPath] = resolve(
                field, base: base[keyPath: keyPath], upstream: upstream.draft[keyPath: keyPath], device: device.draft[keyPath: keyPath])
        }

        /// The upstream's attachments but those the device removed, then the device's additions;
        /// each kept one's alt text and position resolved on their own; positions then counted
        /// from 0 in the order they resolve to.
        mutating func mergeAttachments() {
            let kept = Dictionary(base.attachments.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let onDevice = Dictionary(device.draft.attachments.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let upstreamIDs = Set(upstream.draft.attachments.map(\.id))
            var attachments: [Attachment] = []
            for var attachment in upstream.draft.attachments {
                guard let was = kept[attachment.id] else {
                    attachments.append(attachment)
                    continue
                }
                guard let there = onDevice[attachment.id] else { continue }
                attachment.altText = resolve(.attachments, base: was.altText, upstream: attachment.altText, device: there.altText)
                attachment.position = resolve(.attachments, base: was.position, upstream: attachment.position, device: there.position)
                attachments.append(attachment)
            }
            attachments += device.draft.attachments.filter { kept[$0.id] == nil && !upstreamIDs.contains($0.id) }
            // Stable: equal positions keep the upstream's order, then the device's additions'.
            let ordered = attachments.enumerated().sorted { ($0.element.position, $0.offset) < ($1.element.position, $1.offset) }
            merged.attachments = ordered.enumerated().map { index, entry in
                var attachment = entry.element
                attachment.position = index
                return attachment
            }
        }
    }
}
