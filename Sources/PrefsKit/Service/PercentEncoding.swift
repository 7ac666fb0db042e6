/// Percent-encoding as the API's clients and server write a query value or a path segment.
package enum PercentEncoding {
    /// `text`'s UTF-8 with every byte but ASCII letters, digits and `punctuation` as `%XX`.
    package static func encoded(_ text: String, keeping punctuation: String) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                encoded.append(byte)
            case _ where punctuation.utf8.contains(byte):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// `text` percent-encoded for a query value, where `/`, `:` and `@` may stay.
    package static func queryValue(_ text: String) -> String {
        encoded(text, keeping: "-._~/:@")
    }
}
