import Configuration
import Foundation
import PrefsKit

extension ResolvedPreference {
    /// The effective value as swift-configuration's `type`, nil when there is none (source
    /// `none`). Throws `invalid_value`, naming the key, its scope and where the value came from,
    /// for a value that does not map to `type`:
    ///
    /// - `string`: a JSON string as itself; any other value as its JSON text;
    /// - `int`: an integer a 64-bit `Int` holds; `double`: a number a `Double` holds exactly;
    ///   `bool`: `true` or `false` — never a number or string converted;
    /// - `bytes`: a string as base64; any other value as its JSON text's UTF-8 bytes;
    /// - arrays: a JSON array whose elements each map as above (strings only as strings, byte
    ///   chunks as base64 strings); `[]` maps to any array type.
    func configValue(as type: ConfigType) throws -> ConfigValue? {
        guard isSet else { return nil }
        guard let content = Self.content(of: value, as: type) else {
            throw PrefsError(
                .invalidValue,
                "'\(key)' at \(scope) holds the \(value.typeName) \(value.canonicalText.truncatedForMessage) (source: \(source)), which cannot be read as \(Self.reads(type))."
            )
        }
        return ConfigValue(content, isSecret: false)
    }

    /// What a `type` read takes, for the error message.
    private static func reads(_ type: ConfigType) -> String {
        switch type {
        case .string: "a string"
        case .int: "an int (a whole number of at most 64 bits)"
        case .double: "a double (a number a Double holds exactly)"
        case .bool: "a bool (true or false)"
        case .bytes: "bytes (a base64 string, or any other JSON value as its text)"
        case .stringArray: "a string array (an array of strings)"
        case .intArray: "an int array (an array of whole numbers of at most 64 bits)"
        case .doubleArray: "a double array (an array of numbers Doubles hold exactly)"
        case .boolArray: "a bool array (an array of true and false)"
        case .byteChunkArray: "a byte chunk array (an array of base64 strings)"
        }
    }

    private static func content(of value: JSONValue, as type: ConfigType) -> ConfigContent? {
        switch type {
        case .string:
            if case .string(let string) = value { return .string(string) }
            return .string(value.canonicalText)
        case .int: return int(value).map { .int($0) }
        case .double: return double(value).map { .double($0) }
        case .bool: return bool(value).map { .bool($0) }
        case .bytes:
            if case .string(let string) = value { return base64(string).map { .bytes($0) } }
            return .bytes(Array(value.canonicalText.utf8))
        case .stringArray: return array(value, string).map { .stringArray($0) }
        case .intArray: return array(value, int).map { .intArray($0) }
        case .doubleArray: return array(value, double).map { .doubleArray($0) }
        case .boolArray: return array(value, bool).map { .boolArray($0) }
        case .byteChunkArray: return array(value, { string($0).flatMap(base64) }).map { .byteChunkArray($0) }
        }
    }

    private static func array<Element>(_ value: JSONValue, _ element: (JSONValue) -> Element?) -> [Element]? {
        guard case .array(let elements) = value else { return nil }
        var mapped: [Element] = []
        mapped.reserveCapacity(elements.count)
        for value in elements {
            guard let item = element(value) else { return nil }
            mapped.append(item)
        }
        return mapped
    }

    private static func string(_ value: JSONValue) -> String? {
        if case .string(let string) = value { return string }
        return nil
    }

    private static func int(_ value: JSONValue) -> Int? {
        // prefsd keeps every whole number within 64 bits as an integer.
        if case .integer(let integer) = value { return Int(exactly: integer) }
        return nil
    }

    private static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let double): return double
        case .integer(let integer): return Double(exactly: integer)
        case .decimal(let decimal):
            // JSONValue's equality compares numbers exactly.
            guard let double = Double(decimal.description), JSONValue.number(double) == value else { return nil }
            return double
        default: return nil
        }
    }

    private static func bool(_ value: JSONValue) -> Bool? {
        if case .bool(let bool) = value { return bool }
        return nil
    }

    private static func base64(_ string: String) -> [UInt8]? {
        Data(base64Encoded: string).map { Array($0) }
    }
}
