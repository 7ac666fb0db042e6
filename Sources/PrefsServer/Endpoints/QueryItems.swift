/// A request target's query, `a=1&b=%2Fx`: items split at `&`, each name at its first `=`, values
/// percent-decoded (kept as sent when they do not decode), `+` left as it is.
///
/// Read from the target's UTF-8 bytes: every routed request's target is split, and walking it by
/// `Character` (which breaks graphemes) or through `Substring`'s generic indexes cost thousands of
/// instructions a request.
struct QueryItems: Sendable {
    /// The items, in order.
    let items: [(name: String, value: String)]

    /// No items.
    init() {
        items = []
    }

    /// The items of `query`, the bytes after `?`.
    init(_ query: UnsafeBufferPointer<UInt8>) {
        var items: [(name: String, value: String)] = []
        var start = query.startIndex
        while start < query.endIndex {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            defer { start = end + 1 }
            guard end > start else { continue }
            let item = query[start..<end]
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else {
                items.append((String(decoding: item, as: UTF8.self), ""))
                continue
            }
            let value = UnsafeBufferPointer(rebasing: item[(equals + 1)...])
            items.append(
                (String(decoding: item[..<equals], as: UTF8.self), Self.percentDecoded(value) ?? String(decoding: value, as: UTF8.self)))
        }
        self.items = items
    }

    /// The first value of `name`.
    subscript(name: String) -> String? {
        items.first { $0.name == name }?.value
    }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// `text` with its `%XX` escapes decoded; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard text.contains(UInt8(ascii: "%")) else { return String(decoding: text, as: UTF8.self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            guard text[index] == UInt8(ascii: "%") else {
                bytes.append(text[index])
                index += 1
                continue
            }
            guard index + 2 < text.endIndex, let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
