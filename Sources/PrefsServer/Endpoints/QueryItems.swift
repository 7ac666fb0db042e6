/// A request target's query, `a=1&b=%2Fx`: items split at `&`, each name at its first `=`, values
/// percent-decoded (kept as sent when they do not decode), `+` left as it is.
struct QueryItems: Sendable {
    /// The items, in order.
    let items: [(name: Substring, value: String)]

    /// The items of `query` (the text after `?`).
    init(_ query: Substring) {
        // Split as bytes: `&` and `=` are ASCII, and a split by Character would break graphemes.
        items = query.utf8.split(separator: UInt8(ascii: "&")).map { item in
            guard let equals = item.firstIndex(of: UInt8(ascii: "=")) else { return (Substring(item), "") }
            let value = Substring(item[item.index(after: equals)...])
            return (Substring(item[..<equals]), Self.percentDecoded(value) ?? String(value))
        }
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
    static func percentDecoded(_ text: Substring) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var index = text.utf8.startIndex
        while index < text.utf8.endIndex {
            let byte = text.utf8[index]
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                index = text.utf8.index(after: index)
                continue
            }
            let high = text.utf8.index(after: index)
            guard high < text.utf8.endIndex, text.utf8.index(after: high) < text.utf8.endIndex,
                let first = hexValue(text.utf8[high]), let second = hexValue(text.utf8[text.utf8.index(after: high)])
            else { return nil }
            bytes.append(first << 4 | second)
            index = text.utf8.index(high, offsetBy: 2)
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
