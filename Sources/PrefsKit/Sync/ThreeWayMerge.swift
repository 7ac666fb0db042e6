/// A three-way merge of two edits of one sequence (diff3): what each side changed since the base
/// they both started from is kept, and a region both changed differently is a conflict.
///
/// Each side's changes are found with the standard library's `CollectionDifference` against the
/// base. The base elements neither side touched are the merge's fixed points; between two of
/// them, a region only one side changed takes that side's version, one both changed alike takes
/// it once, and one both changed differently cannot be merged.
public enum ThreeWayMerge {
    /// Merges `ours` and `theirs`, both edits of `base`.
    ///
    /// - Returns: The merged sequence, or nil where a region was changed differently on both
    ///   sides (a conflict).
    public static func merge<Element: Hashable>(base: [Element], ours: [Element], theirs: [Element]) -> [Element]? {
        if ours == theirs || theirs == base { return ours }
        if ours == base { return theirs }
        let (toOurs, toTheirs) = (matches(from: base, to: ours), matches(from: base, to: theirs))
        var merged: [Element] = []
        merged.reserveCapacity(max(ours.count, theirs.count))
        var (b, o, t) = (0, 0, 0)
        while true {
            // The next base element both sides kept where each one is now: a fixed point.
            var next = b
            while next < base.count, toOurs[next] == nil || toTheirs[next] == nil { next += 1 }
            let (nextOurs, nextTheirs) = next < base.count ? (toOurs[next]!, toTheirs[next]!) : (ours.count, theirs.count)
            let (was, mine, yours) = (base[b..<next], ours[o..<nextOurs], theirs[t..<nextTheirs])
            if mine.elementsEqual(was) {
                merged += yours
            } else if yours.elementsEqual(was) || mine.elementsEqual(yours) {
                merged += mine
            } else {
                return nil
            }
            guard next < base.count else { return merged }
            merged.append(base[next])
            (b, o, t) = (next + 1, nextOurs + 1, nextTheirs + 1)
        }
    }

    /// Where each element of `base` is in `edited`, for those the edit kept (nil for one it
    /// removed): in order, since a difference keeps the rest's order.
    ///
    /// Among equal elements, which one an edit removed or inserted is a matter of choice; the
    /// choice is made as `git`'s diff makes it (``ChangeRuns``), so that two sides that removed
    /// "one of three equal lines" removed the same one, and a merge agrees with `git merge-file`.
    private static func matches<Element: Hashable>(from base: [Element], to edited: [Element]) -> [Int?] {
        var removed = ChangeRuns(base)
        var inserted = ChangeRuns(edited)
        for change in edited.difference(from: base) {
            switch change {
            case .remove(let offset, _, _): removed.changed[offset] = true
            case .insert(let offset, _, _): inserted.changed[offset] = true
            }
        }
        removed.compact(against: inserted)
        inserted.compact(against: removed)
        var map = [Int?](repeating: nil, count: base.count)
        var position = 0
        for index in base.indices where !removed.changed[index] {
            while inserted.changed[position] { position += 1 }
            map[index] = position
            position += 1
        }
        return map
    }
}

extension ThreeWayMerge {
    /// Merges two edits of a text by words: the text is cut into runs of letters and digits and
    /// single other characters (spaces, punctuation, line breaks), so that edits to different
    /// words, sentences or paragraphs both survive, and only edits to the same words — or to
    /// words next to each other, with nothing unchanged between them — conflict.
    ///
    /// - Returns: The merged text, or nil for a conflict.
    public static func mergeText(base: String, ours: String, theirs: String) -> String? {
        merge(base: words(of: base), ours: words(of: ours), theirs: words(of: theirs)).map { $0.joined() }
    }

    /// Merges two edits of a text by lines, as `diff3` and `git merge-file` do.
    ///
    /// - Returns: The merged text, or nil for a conflict.
    public static func mergeLines(base: String, ours: String, theirs: String) -> String? {
        merge(base: lines(of: base), ours: lines(of: ours), theirs: lines(of: theirs)).map { $0.joined() }
    }

    /// `text` cut into words and single other characters, the pieces ``mergeText(base:ours:theirs:)``
    /// merges; joined, they are `text`.
    ///
    /// It reads the text's UTF-8 bytes: an ASCII byte followed by another (CR LF aside) is a
    /// character of its own, told apart by its value; only around other bytes are characters
    /// (grapheme clusters) and their Unicode properties looked up.
    package static func words(of text: String) -> [Substring] {
        var text = text
        text.makeContiguousUTF8()  // so that its bytes are at hand (the `!` below)
        return text.utf8.withContiguousStorageIfAvailable { bytes in
            var pieces: [Substring] = []
            pieces.reserveCapacity(bytes.count / 3)
            let index = { (offset: Int) in text.utf8.index(text.startIndex, offsetBy: offset) }
            var (start, offset, inWord) = (0, 0, false)
            while offset < bytes.count {
                let (end, isWordCharacter) = character(at: offset, of: bytes, in: text)
                if offset != start, !(inWord && isWordCharacter) {
                    pieces.append(text[index(start)..<index(offset)])
                    start = offset
                }
                (offset, inWord) = (end, isWordCharacter)
            }
            if start < bytes.count { pieces.append(text[index(start)...]) }
            return pieces
        }!
    }

    /// Where the character that starts at byte `offset` of `text` ends, and whether it is a
    /// letter or a digit.
    private static func character(
        at offset: Int, of bytes: UnsafeBufferPointer<UInt8>, in text: String
    ) -> (end: Int, isWordCharacter: Bool) {
        let byte = bytes[offset]
        let next = offset + 1 < bytes.count ? bytes[offset + 1] : 0
        if byte < 0x80, next < 0x80, !(byte == UInt8(ascii: "\r") && next == UInt8(ascii: "\n")) {
            return (offset + 1, (byte | 0x20) &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10)
        }
        let character = text[text.utf8.index(text.startIndex, offsetBy: offset)]
        return (offset + character.utf8.count, character.isLetter || character.isNumber)
    }

    /// `text` cut into lines, each with its line break; joined, they are `text`.
    static func lines(of text: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        for index in text.indices where text[index] == "\n" || text[index] == "\r\n" {
            let end = text.index(after: index)
            pieces.append(text[start..<end])
            start = end
        }
        if start < text.endIndex { pieces.append(text[start...]) }
        return pieces
    }
}
