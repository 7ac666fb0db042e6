import Foundation
import PrefsKit
import Testing

/// ``DraftMerge``: fields on their own, text by words, attachments as a set — and nothing typed
/// lost where the text cannot be merged.
@Suite struct DraftMergeTests {
    static let id = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
    static let day = Date(timeIntervalSince1970: 1_800_000_000)

    static let base = Draft(
        id: id, account: "alice", thread: "t1", position: 0, text: "First paragraph, as typed.\n\nSecond paragraph, as typed.",
        visibility: .public, language: "en", createdAt: day, updatedAt: day,
        attachments: [attachment("A", at: 0), attachment("B", at: 1, alt: "a cat")])

    /// An attachment of the draft named by `name` (its id's last digit, and its file name).
    static func attachment(_ name: String, at position: Int, alt: String? = nil) -> PrefsKit.Attachment {
        let digit = Array("ABCDEF").firstIndex(of: Character(name))!
        return PrefsKit.Attachment(
            id: UUID(uuidString: "00000000-0000-0000-0000-00000000000\(digit)")!, draft: id, position: position, kind: .image,
            mimeType: "image/png", filename: "\(name).png", byteSize: 10, sha256: String(repeating: "a", count: 64), altText: alt)
    }

    static func stamp(_ milliseconds: Int64, _ device: String) -> SyncStamp {
        SyncStamp(milliseconds: milliseconds, counter: 0, device: device)
    }

    @Test("Each side's change of a different field is kept; nothing is contested")
    func differentFieldsBothSurvive() {
        var there = Self.base
        there.contentWarning = "spoilers"
        there.updatedAt = Self.day + 5
        var here = Self.base
        here.visibility = .unlisted
        here.language = "de"
        let merge = DraftMerge(base: Self.base, upstream: .init(draft: there), device: .init(draft: here))
        #expect(merge.merged.contentWarning == "spoilers")
        #expect(merge.merged.visibility == .unlisted && merge.merged.language == "de")
        #expect(merge.contested.isEmpty && merge.conflictedText == nil)
        #expect(merge.merged.updatedAt == Self.day + 5)
    }

    @Test("A field both sides changed keeps the later stamp's value, and says it was contested")
    func theLaterStampWinsAField() {
        var there = Self.base
        there.visibility = .private
        var here = Self.base
        here.visibility = .direct
        let later = DraftMerge(
            base: Self.base, upstream: .init(draft: there, stamps: [.visibility: Self.stamp(10, "phone")]),
            device: .init(draft: here, stamps: [.visibility: Self.stamp(20, "laptop")]))
        #expect(later.merged.visibility == .direct && later.contested == [.visibility])
        let earlier = DraftMerge(
            base: Self.base, upstream: .init(draft: there, stamps: [.visibility: Self.stamp(30, "phone")]),
            device: .init(draft: here, stamps: [.visibility: Self.stamp(20, "laptop")]))
        #expect(earlier.merged.visibility == .private && earlier.contested == [.visibility])
        // The same change on both sides is no contest.
        let same = DraftMerge(base: Self.base, upstream: .init(draft: there), device: .init(draft: there))
        #expect(same.merged.visibility == .private && same.contested.isEmpty)
    }

    @Test("Edits to different paragraphs merge; edits to the same words keep the device's text for a conflicted copy")
    func textMergesOrIsKept() {
        var there = Self.base
        there.text = "First paragraph, as edited there.\n\nSecond paragraph, as typed."
        var here = Self.base
        here.text = "First paragraph, as typed.\n\nSecond paragraph, as edited here."
        let merged = DraftMerge(base: Self.base, upstream: .init(draft: there), device: .init(draft: here))
        #expect(merged.merged.text == "First paragraph, as edited there.\n\nSecond paragraph, as edited here.")
        #expect(merged.conflictedText == nil && merged.contested.isEmpty)

        here.text = "First paragraph, as rewritten here.\n\nSecond paragraph, as typed."
        let clash = DraftMerge(base: Self.base, upstream: .init(draft: there), device: .init(draft: here))
        #expect(clash.merged.text == there.text, "the upstream's text stays")
        #expect(clash.conflictedText == here.text, "the device's text is kept for a copy")
        #expect(clash.contested == [.text])
    }

    @Test("Attachments are a set: both sides' additions and removals are kept, alt texts and positions on their own")
    func attachmentsAsASet() {
        var there = Self.base
        // The upstream removes A, adds C, and changes B's alt text.
        there.attachments = [Self.attachment("B", at: 0, alt: "a black cat"), Self.attachment("C", at: 1)]
        var here = Self.base
        // The device keeps A and B, moves B first, and adds D.
        here.attachments = [Self.attachment("B", at: 0, alt: "a cat"), Self.attachment("A", at: 1), Self.attachment("D", at: 2)]
        let merge = DraftMerge(base: Self.base, upstream: .init(draft: there), device: .init(draft: here))
        #expect(merge.merged.attachments.map(\.filename) == ["B.png", "C.png", "D.png"])
        #expect(merge.merged.attachments.map(\.position) == [0, 1, 2])
        #expect(merge.merged.attachments[0].altText == "a black cat")
        #expect(merge.contested.isEmpty)

        // A removal on the device of what the upstream kept: removed.
        here.attachments = [Self.attachment("A", at: 0)]
        let removed = DraftMerge(base: Self.base, upstream: .init(draft: Self.base), device: .init(draft: here))
        #expect(removed.merged.attachments.map(\.filename) == ["A.png"])
    }

    @Test("An alt text both sides changed keeps the later stamp of the attachments")
    func contestedAltText() {
        var there = Self.base
        there.attachments[1].altText = "a tabby"
        var here = Self.base
        here.attachments[1].altText = "a sleeping cat"
        let merge = DraftMerge(
            base: Self.base, upstream: .init(draft: there, stamps: [.attachments: Self.stamp(5, "phone")]),
            device: .init(draft: here, stamps: [.attachments: Self.stamp(9, "laptop")]))
        #expect(merge.merged.attachments[1].altText == "a sleeping cat")
        #expect(merge.contested == [.attachments])
    }
}
