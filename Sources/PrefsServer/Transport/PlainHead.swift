import HTTPTypes
import NIOCore

/// A request head read from raw bytes, in the plain form only: `METHOD TARGET HTTP/1.1`, header
/// lines of visible ASCII, a body framed by `Content-Length` if any — no `Transfer-Encoding`,
/// `Expect` or `Upgrade`, no line folding, no bare CR or LF. Anything else is NIO's decoder's to
/// parse (``FrontAnswerHandler`` steps aside for it), and so is a method no endpoint takes
/// (``PlainMethods``).
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
    /// The header fields, read as they are asked for.
    var fields: RequestHeaders
    /// The head's length in bytes, up to and including the empty line.
    var length: Int
    /// The body's length (`Content-Length`), 0 without one.
    var bodyLength: Int
    /// What the `Connection` header lines ask of the connection.
    var connection: ConnectionOptions

    /// Reads the head at the start of `bytes`.
    /// - Parameters:
    ///   - bytes: The bytes received.
    ///   - methods: The methods a plain head may name.
    /// - Returns: The head, or what was found instead.
    static func parse(_ bytes: ByteBuffer, methods: PlainMethods) -> Parsed {
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
            guard let space = line.firstIndex(of: 0x20), let method = methods.method(line[..<space]) else { return .other }
            let version = " HTTP/1.1".utf8
            guard line.count > space + version.count + 1, line.suffix(version.count).elementsEqual(version) else {
                return .other
            }
            let target = line[(space + 1)..<(lineEnd - version.count)]
            guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .other }
            // The header lines, up to the empty one: checked here, read when asked for.
            var connection = ConnectionOptions(nil)
            var bodyLength: Int?
            let fieldsStart = lineEnd + 2
            var start = fieldsStart
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
                    field[(colon + 1)...].allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 })
                else { return .other }
                let name = field[..<colon]
                let value = HeaderLine.trimmingSpaces(field[(colon + 1)...])
                if refusedNames.contains(where: { HeaderLine.equalsIgnoringCase(name, $0) }) { return .other }
                if HeaderLine.equalsIgnoringCase(name, contentLength) {
                    // A length once, in plain digits.
                    guard bodyLength == nil, (1...9).contains(value.count), value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                    else { return .other }
                    bodyLength = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                }
                if HeaderLine.equalsIgnoringCase(name, connectionName) { connection.take(value) }
                start = end + 2
            }
            return .head(
                PlainHead(
                    method: method, target: String(decoding: target, as: UTF8.self),
                    fields: RequestHeaders(lines: bytes.getSlice(at: bytes.readerIndex + fieldsStart, length: start - fieldsStart)!),
                    length: start + 2, bodyLength: bodyLength ?? 0, connection: connection))
        }
    }

    private static let contentLength = Array(HTTPField.Name.contentLength.canonicalName.utf8)
    private static let connectionName = Array(HTTPField.Name.connection.canonicalName.utf8)
    /// Header fields no plain request has.
    private static let refusedNames = [HTTPField.Name.transferEncoding, .upgrade, .expect].map { Array($0.canonicalName.utf8) }

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
