/// One change of a text: `delete` Unicode scalars at `at` replaced by `insert`. Sync sends a
/// draft's text as the splice from the text both sides have, when that is shorter than the text:
/// an edit of a long draft costs the edit's bytes on the wire, not the draft's.
///
/// ```swift
/// let splice = TextSplice(from: "Hello world", to: "Hello, brave world")
/// try splice?.applied(to: "Hello world")  // "Hello, brave world"
/// ```
public struct TextSplice: Codable, Sendable, Hashable {
    /// Where the change starts, in Unicode scalars from the start.
    public var at: Int
    /// How many Unicode scalars it removes there.
    public var delete: Int
    /// What it puts in their place.
    public var insert: String

    /// A splice.
    public init(at: Int, delete: Int, insert: String) {
        self.at = at
        self.delete = delete
        self.insert = insert
    }

    /// The one splice that makes `old` `new`: what lies between their common start and their
    /// common end (an edit in one place is exactly that; edits in several, the stretch that spans
    /// them). Equal texts give an empty splice.
    public init(from old: String, to new: String) {
        let (old, new) = (Array(old.unicodeScalars), Array(new.unicodeScalars))
        var start = 0
        while start < old.count, start < new.count, old[start] == new[start] { start += 1 }
        var end = 0
        while end < old.count - start, end < new.count - start, old[old.count - 1 - end] == new[new.count - 1 - end] { end += 1 }
        var inserted = String.UnicodeScalarView()
        inserted.append(contentsOf: new[start..<(new.count - end)])
        self.init(at: start, delete: old.count - end - start, insert: String(inserted))
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { delete == 0 && insert.isEmpty }

    /// `text` with the splice made.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` when the splice reaches beyond `text`'s end
    ///   (it was made on another text).
    public func applied(to text: String) throws -> String {
        let scalars = Array(text.unicodeScalars)
        guard at >= 0, delete >= 0, at <= scalars.count, delete <= scalars.count - at else {
            throw PrefsError(
                .invalidRequest, "A text splice at \(at) removing \(delete) does not fit a text of \(scalars.count) characters.")
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[..<at])
        result.append(contentsOf: insert.unicodeScalars)
        result.append(contentsOf: scalars[(at + delete)...])
        return String(result)
    }
}
