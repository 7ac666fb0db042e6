/// Reads JSON text (RFC 8259) into a ``JSONValue``, keeping every number exactly as written
/// (``JSONValue/number(exactly:)``) — which no `JSONDecoder` can: it reads numbers into `Double`
/// or `Decimal` before any type sees them, rounding some silently.
///
/// Strict where a lenient reading would change a value without a word: an object with a member
/// twice, a trailing comma, a lone surrogate, text that is not UTF-8 are refused, as is nesting
/// deeper than ``maximumDepth``. A leading byte order mark is skipped. Errors are `invalid_json`,
/// naming the byte offset; a number no type holds exactly is `invalid_value`.
struct JSONParser {
    /// The deepest nesting of arrays and objects read.
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The one value `bytes` hold, with nothing but whitespace around it.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = JSONParser(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected \(parser.shown) after the value") }
        return value
    }

    private mutating func value() throws -> JSONValue {
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected \(shown) where a value should be")
        }
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if next(is: "}") { return .object(members) }
        repeat {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a member name in quotes, found \(shown)")
            }
            let start = index
            let name = try string()
            skipWhitespace()
            guard next(is: ":") else { throw failure("expected ':' after a member name, found \(shown)") }
            skipWhitespace()
            guard members.updateValue(try value(), forKey: name) == nil else {
                index = start
                throw failure("the object has the member \"\(name.truncatedForMessage)\" twice")
            }
            skipWhitespace()
        } while next(is: ",")
        guard next(is: "}") else { throw failure("expected ',' or '}' in an object, found \(shown)") }
        return .object(members)
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if next(is: "]") { return .array(elements) }
        repeat {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
        } while next(is: ",")
        guard next(is: "]") else { throw failure("expected ',' or ']' in an array, found \(shown)") }
        return .array(elements)
    }

    /// Steps into an array or object.
    private mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("arrays and objects nest deeper than \(Self.maximumDepth)") }
        index += 1
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
        let word = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes[index...].starts(with: word) else { throw failure("unexpected \(shown) where a value should be") }
        index += word.count
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        _ = next(is: "-")
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs a digit after '-'") }
        if !next(is: "0") { skipDigits() }
        if next(is: ".") {
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs a digit after '.'") }
            skipDigits()
        }
        if next(is: "e") || next(is: "E") {
            if !next(is: "+") { _ = next(is: "-") }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs a digit in its exponent") }
            skipDigits()
        }
        return try JSONValue.number(exactly: UnsafeBufferPointer(rebasing: bytes[start..<index]))
    }

    private mutating func string() throws -> String {
        index += 1
        let start = index
        // Without escapes, the text is the bytes between the quotes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
            index += 1
        }
        var text = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw failure("the text ends inside a string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: text, as: UTF8.self) else {
                    index = start
                    throw failure("a string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                try escape(into: &text)
            case ..<0x20:
                index -= 1
                throw failure("a control character (U+\(hex4(UInt16(byte)))) in a string must be escaped")
            default:
                text.append(byte)
            }
        }
    }

    /// Reads the escape after a backslash and appends what it stands for, as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws {
        guard index < bytes.count else { throw failure("the text ends inside a string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            var scalar = Unicode.Scalar(unit)
            if UTF16.isLeadSurrogate(unit) {
                guard bytes[index...].starts(with: "\\u".utf8) else {
                    throw failure("the escape \\u\(hex4(unit)) is half of a surrogate pair; the other half is missing")
                }
                index += 2
                let trail = try hexUnit()
                guard UTF16.isTrailSurrogate(trail) else {
                    throw failure("the escape \\u\(hex4(unit)) is not followed by the second half of its surrogate pair")
                }
                scalar = Unicode.Scalar(UInt32(0x10000 + (Int(unit) - 0xD800) << 10 + (Int(trail) - 0xDC00)))
            }
            guard let scalar else { throw failure("the escape \\u\(hex4(unit)) is half of a surrogate pair") }
            text.append(contentsOf: UTF8.encode(scalar)!)
        default:
            index -= 1
            throw failure("a backslash before \(shown) is not an escape JSON has")
        }
    }

    /// The four hex digits of a `\u` escape.
    private mutating func hexUnit() throws -> UInt16 {
        guard index + 4 <= bytes.count,
            let unit = UInt16(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self), radix: 16),
            bytes[index..<index + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
        else { throw failure("\\u needs four hex digits") }
        index += 4
        return unit
    }

    private func hex4(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Moves past `byte` if it comes next.
    private mutating func next(is byte: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
        index += 1
        return true
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The byte at the current position, for a message: `'x'`, or the end of the text.
    private var shown: String {
        guard index < bytes.count else { return "the end of the text" }
        let byte = bytes[index]
        return (0x20..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    private func failure(_ reason: String) -> PrefsError {
        PrefsError(.invalidJSON, "The body is not valid JSON: \(reason) (at byte \(index)).")
    }
}
