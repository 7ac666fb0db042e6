import HTTPTypes
import NIOCore

/// A request head read from raw bytes, in the plain form only: `METHOD TARGET HTTP/1.1`, header
/// lines of visible ASCII, a body framed by `Content-Length` if any — no `Transfer-Encoding`,
/// `Expect` or `Upgrade`, no line folding, no bare CR or LF. Anything else is NIO's decoder's to
/// parse (``FrontAnswerHandler`` steps aside for it).
struct PlainHead {
    /// What ``parse(_:)`` found at the start of the bytes.
    enum Parsed {
        case head(PlainHead)
        /// No whole head yet.
        case incomplete
        /// Not a plain head.
        case other
    }

    var method: HTTPRequest.Method
    /// The request target, as sent.
    var target: String
    var fields: RequestHeaders
    /// The head's length in bytes, up to and including the empty line.
    var length: Int
    /// The body's length (`Content-Length`), 0 without one.
    var bodyLength: Int
    /// What the `Connection` header lines ask of the connection.
    var connection: ConnectionOptions

    /// The methods the API answers; another goes to NIO's decoder (and the API's 405 or 404).
    private static let methods: [String: HTTPRequest.Method] = [
        "GET": .get, "HEAD": .head, "PUT": .put, "POST": .post, "DELETE": .delete, "PATCH": .patch,
    ]

    /// Reads the head at the start of `bytes`.
    static func parse(_ bytes: ByteBuffer) -> Parsed {
        bytes.withUnsafeReadableBytes { raw in
            // The request line.
            let lineEnd: Int
            switch Line.end(in: raw, from: 0) {
            case .at(let end): lineEnd = end
            case .incomplete:
                // A request line starts with a method in capitals: anything else is not plain.
                let method = raw.prefix { $0 != 0x20 }
                return method.count <= 7 && method.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
                    ? .incomplete : .other
            case .malformed: return .other
            }
            let line = raw[0..<lineEnd]
            guard let space = line.firstIndex(of: 0x20),
                let method = methods[String(decoding: line[..<space], as: UTF8.self)]
            else { return .other }
            let version = " HTTP/1.1".utf8
            guard line.count > space + version.count + 1, line.suffix(version.count).elementsEqual(version) else {
                return .other
            }
            let target = line[(space + 1)..<(lineEnd - version.count)]
            guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .other }
            // The header lines, up to the empty one.
            var fields: [HTTPField] = []
            var connection: [String] = []
            var bodyLength: Int?
            var start = lineEnd + 2
            while true {
                let end: Int
                switch Line.end(in: raw, from: start) {
                case .at(let found): end = found
                case .incomplete: return .incomplete
                case .malformed: return .other
                }
                if end == start { break }
                let field = raw[start..<end]
                guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > start,
                    field[..<colon].allSatisfy(isTokenByte),
                    field[(colon + 1)...].allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }),
                    let name = knownName(field[..<colon]) ?? HTTPField.Name(String(decoding: field[..<colon], as: UTF8.self))
                else { return .other }
                guard name != .transferEncoding, name != .upgrade, name != .expect else { return .other }
                let value = String(decoding: trimmingSpaces(field[(colon + 1)...]), as: UTF8.self)
                if name == .contentLength {
                    // A length once, in plain digits.
                    guard bodyLength == nil, value.utf8.count <= 9, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                        let length = Int(value)
                    else { return .other }
                    bodyLength = length
                }
                if name == .connection { connection.append(value) }
                fields.append(HTTPField(name: name, value: value))
                start = end + 2
            }
            return .head(
                PlainHead(
                    method: method, target: String(decoding: target, as: UTF8.self), fields: RequestHeaders(fields), length: start + 2,
                    bodyLength: bodyLength ?? 0, connection: ConnectionOptions(connection)))
        }
    }

    /// The names clients send on nearly every request, by their lowercase bytes.
    private static let knownNames: [(bytes: [UInt8], name: HTTPField.Name)] = [
        HTTPField.Name("Host")!, .contentLength, .connection, .contentType, .userAgent, .accept, .authorization, .ifMatch,
    ].map { (Array($0.canonicalName.utf8), $0) }

    /// `bytes` as one of ``knownNames``, in any case, without making a string; nil for another.
    private static func knownName(_ bytes: Slice<UnsafeRawBufferPointer>) -> HTTPField.Name? {
        for known in knownNames where known.bytes.count == bytes.count {
            // ASCII letters differ from their capitals only in 0x20; the other token bytes match exactly.
            if zip(known.bytes, bytes).allSatisfy({ $0 == $1 | ($0 >= 0x61 && $0 <= 0x7A ? 0x20 : 0) }) { return known.name }
        }
        return nil
    }

    /// `bytes` without leading and trailing spaces and tabs (a header value's optional whitespace).
    private static func trimmingSpaces(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var (start, end) = (bytes.startIndex, bytes.endIndex)
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return bytes[start..<end]
    }

    /// RFC 9110's `tchar`: the bytes a header name is made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// Where a line of a request head ends: at a CR followed by LF.
private enum Line {
    case at(Int)
    case incomplete
    /// A bare CR or LF: not a plain head.
    case malformed

    /// The end of the line that starts at `start`.
    static func end(in raw: UnsafeRawBufferPointer, from start: Int) -> Line {
        var index = start
        while index < raw.count {
            switch raw[index] {
            case 0x0D:
                guard index + 1 < raw.count else { return .incomplete }
                return raw[index + 1] == 0x0A ? .at(index) : .malformed
            case 0x0A:
                return .malformed
            default:
                index += 1
            }
        }
        return .incomplete
    }
}
