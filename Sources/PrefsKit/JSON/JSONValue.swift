import Foundation

/// Any JSON value: what a preference holds.
///
/// Every number is kept exactly as written: integers apart from other numbers, so that `1`
/// round-trips as `1`, not `1.0`; and a number neither an `Int64` nor a `Double` holds exactly
/// (`12345678901234567890`, `0.10000000000000000001`) as a `Decimal`. A number none of them holds
/// exactly is refused, never rounded (``init(parsing:)-(DataProtocol)``).
/// ``canonicalText`` is the one encoding the store writes (object keys sorted), so two equal
/// values always have the same bytes.
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number an `Int64` holds.
    case integer(Int64)
    /// A number its `Double` holds exactly (as the `Double`'s shortest text shows it).
    case number(Double)
    /// A number neither `Int64` nor `Double` holds exactly, or a whole number beyond `Int64`:
    /// up to 38 significant digits.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// An array of values, in order.
    case array([JSONValue])
    /// An object: its members by name.
    case object([String: JSONValue])

    /// Parses JSON text, keeping every number exactly.
    ///
    /// - Parameter data: The JSON text, as UTF-8 bytes.
    /// - Throws: ``PrefsError`` — `invalid_json` with the reason and where, or `invalid_value`
    ///   for a number it cannot keep exactly.
    public init(parsing data: some DataProtocol) throws {
        let data = Data(data)
        self = try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return try Self.simpleScalar(bytes) ?? JSONParser.parse(bytes)
        }
    }

    /// Parses JSON text from a string.
    ///
    /// - Parameter text: The JSON text.
    /// - Throws: ``PrefsError`` — `invalid_json` with the reason and where, or `invalid_value`
    ///   for a number it cannot keep exactly.
    public init(parsing text: String) throws {
        var text = text
        self = try text.withUTF8 { bytes in try Self.simpleScalar(bytes) ?? JSONParser.parse(bytes) }
    }

    /// The value as compact JSON with object keys sorted: the form the store keeps.
    public var canonicalText: String {
        var text = ""
        writeCanonical(into: &text)
        return text
    }

    /// ``canonicalText`` as UTF-8 bytes.
    public var canonicalData: Data {
        Data(canonicalText.utf8)
    }

    /// Whether every number in the value is finite (JSON has no NaN or infinity).
    public var isFinite: Bool {
        switch self {
        case .number(let number): number.isFinite
        case .decimal(let number): !number.isNaN
        case .array(let elements): elements.allSatisfy(\.isFinite)
        case .object(let members): members.values.allSatisfy(\.isFinite)
        default: true
        }
    }

    /// The name of the value's JSON type, for error messages: `string`, `integer`, …
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .decimal(let number): number.isWhole ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    private static let canonicalEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension JSONValue: Hashable {
    /// Equality as JSON sees it: `2` and `2.0` are the same number.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Double(a) == b && Int64(exactly: b) == a
        case (.decimal(let a), .decimal(let b)): a == b
        case (.decimal(let a), .integer(let b)), (.integer(let b), .decimal(let a)): a == Decimal(b)
        case (.decimal(let a), .number(let b)), (.number(let b), .decimal(let a)): DecimalDigits(a) == DecimalDigits(b)
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        // Numbers hash like the nearest Double (correctly rounded), so that equal ones of any
        // case hash alike.
        case .integer(let value): hasher.combine(Double(value))
        case .number(let value): hasher.combine(value)
        case .decimal(let value): hasher.combine(Double(value.description) ?? 0)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }
}

extension JSONValue: Codable {
    /// Decodes a value through a generic decoder. `WireJSON/decode(_:from:)` reads every number
    /// exactly; a `JSONDecoder` has read each into a `Double` and a `Decimal` before this sees
    /// it: a number is then taken as the one that agrees with the other, which is exact for any
    /// number prefsd writes, but not for one of more digits than a `Decimal` holds.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when what it holds is not a JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = Self.decodedNumber(container) {
            self = value
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// A number as a `JSONDecoder` reads it: the value of its `Decimal` (or, beyond what a
    /// `Decimal` holds, of its `Double`), in the form the parser gives it.
    private static func decodedNumber(_ container: any SingleValueDecodingContainer) -> JSONValue? {
        let double = try? container.decode(Double.self)
        let decimal = try? container.decode(Decimal.self)
        guard let value = decimal.flatMap(DecimalDigits.init) ?? double.flatMap({ $0.isFinite ? DecimalDigits($0) : nil }) else {
            return nil
        }
        return exactNumber(value, double: double)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .decimal(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// JSON `null`, from the literal `nil`.
    ///
    /// - Parameter nilLiteral: The empty tuple, as for every `nil` literal.
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array, from an array literal.
    ///
    /// - Parameter elements: The array's values, in order.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object, from a dictionary literal.
    ///
    /// - Parameter elements: The object's members; of two with the same name, the last is kept.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The canonical JSON text.
    public var description: String { canonicalText }
}

extension DecodingError {
    /// A one-line reason without Swift type names, fit for an API error message.
    package var readableReason: String {
        switch self {
        case .keyNotFound(let key, let context):
            let path = Self.path(context)
            return path.isEmpty ? "\"\(key.stringValue)\" is missing." : "at \(path): \"\(key.stringValue)\" is missing."
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = Self.path(context)
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            let reason = underlying ?? context.debugDescription
            return path.isEmpty ? reason : "at \(path): \(reason)"
        @unknown default:
            return "\(self)"
        }
    }

    /// Where in the document the error is: `values.0.key` (array elements by index).
    private static func path(_ context: Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.filter { !$0.isEmpty }
            .joined(separator: ".")
    }
}

// MARK: - The hot paths, without JSONEncoder and JSONDecoder

extension JSONValue {
    /// Writes ``canonicalText`` — the bytes `JSONEncoder` gives with sorted keys and bare
    /// slashes, as tests check — without an encoder's cost. Non-integral numbers still go
    /// through `JSONEncoder`, the one authority on its number format.
    fileprivate func writeCanonical(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .number(let value):
            // Encoding a finite Double cannot fail; JSON has no form for the others.
            text += (try? JSONValue.canonicalEncoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
        // What JSONEncoder writes for a Decimal.
        case .decimal(let value): text += value.description
        case .string(let value): Self.writeString(value, into: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.writeCanonical(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, into: &text)
                text += ":"
                value.writeCanonical(into: &text)
            }
            text += "}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, nothing else.
    private static func writeString(_ value: String, into text: inout String) {
        text += "\""
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            text += value
            text += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// The commonest preference texts — `true`, `false`, `null`, an integer, a string without
    /// escapes — parsed directly; nil for anything else, which the full parser takes.
    fileprivate static func simpleScalar(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "t"): return bytes.elementsEqual("true".utf8) ? .bool(true) : nil
        case UInt8(ascii: "f"): return bytes.elementsEqual("false".utf8) ? .bool(false) : nil
        case UInt8(ascii: "n"): return bytes.elementsEqual("null".utf8) ? .null : nil
        case UInt8(ascii: "\""):
            guard bytes.count >= 2, bytes.last == UInt8(ascii: "\""),
                !bytes.dropFirst().dropLast().contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return nil }
            return String(validating: bytes.dropFirst().dropLast(), as: UTF8.self).map { .string($0) }
        default:
            // -?(0|[1-9][0-9]*), within Int64.
            let digits = first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
            guard let leading = digits.first, leading >= UInt8(ascii: "0"), leading <= UInt8(ascii: "9"),
                leading != UInt8(ascii: "0") || digits.count == 1,
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                !(first == UInt8(ascii: "-") && digits.elementsEqual(CollectionOfOne(UInt8(ascii: "0")))),
                let value = Int64(String(decoding: bytes, as: UTF8.self))
            else { return nil }
            return .integer(value)
        }
    }
}
