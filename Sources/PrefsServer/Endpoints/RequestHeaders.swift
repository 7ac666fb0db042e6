import HTTPTypes
import NIOCore

/// A request's header fields, looked up by name. A request carries a handful, so a look-up is a
/// scan — cheaper than building `HTTPFields`' index for every request. On the raw-bytes path
/// the fields stay the bytes of the head's header lines, which the listener has checked, and a
/// look-up reads the one asked for: most requests ask for one or none, and pay for no others.
struct RequestHeaders: Sendable {
    private enum Storage: Sendable {
        case fields([HTTPField])
        /// `Name: value` lines, each ending in CRLF, checked by the listener (``PlainHead``).
        case lines(ByteBuffer)
    }

    private let storage: Storage

    /// The fields `fields`, in order.
    init(_ fields: [HTTPField] = []) {
        storage = .fields(fields)
    }

    /// The fields of `lines`: header lines of visible ASCII as a request head has them, each
    /// ending in CRLF, each with a colon after a non-empty name.
    init(lines: ByteBuffer) {
        storage = .lines(lines)
    }

    /// The value of the first field named `name`, if any.
    subscript(name: HTTPField.Name) -> String? {
        switch storage {
        case .fields(let fields):
            return fields.first { $0.name == name }?.value
        case .lines(let lines):
            let wanted = name.canonicalName.utf8
            return lines.withUnsafeReadableBytes { raw in
                var start = 0
                while let end = HeaderLine.lineEnd(in: raw, from: start) {
                    let line = raw[start..<end]
                    start = end + 2
                    // A checked name has no colon in it: the line's name is `wanted`'s length
                    // exactly when a colon follows that many bytes.
                    let colon = line.startIndex + wanted.count
                    guard colon < line.endIndex, line[colon] == UInt8(ascii: ":"),
                        HeaderLine.equalsIgnoringCase(line[..<colon], wanted)
                    else { continue }
                    return String(decoding: HeaderLine.trimmingSpaces(line[(colon + 1)...]), as: UTF8.self)
                }
                return nil
            }
        }
    }
}
