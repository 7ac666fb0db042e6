import Foundation

/// Decodes a `Decodable` type from a ``JSONValue`` that ``JSONParser`` read: a ``JSONValue`` in it
/// (a preference value, a schema default) is handed over as parsed, every number exact — which a
/// `JSONDecoder` cannot do, reading numbers into `Double` or `Decimal` first.
///
/// Strict in the same spirit: a number is given as a Swift number only if that type holds it
/// exactly (`1.5` is no `Int`, `12345678901234567890` no `Double`). Dates are ISO 8601 text
/// (`WireJSON`). Errors are `DecodingError`s, as a `JSONDecoder` throws them.
struct JSONValueDecoder {
    /// `type` from `value`.
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try TreeDecoder(value, codingPath: []).unbox(type)
    }
}

/// One value of the tree, as the `Decoder` a type's `init(from:)` reads.
private struct TreeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: JSONValue, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([Any].self) }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    /// The value as `type`: a ``JSONValue`` as it is, a date from its ISO 8601 text, a Swift
    /// number only if it holds the number exactly, any other type through its `init(from:)`.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return value as! T }
        if T.self == Date.self {
            let text = try unbox(String.self)
            guard let date = WireJSON.date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "'\(text)' is not an ISO 8601 date."))
            }
            return date as! T
        }
        if T.self == Decimal.self {
            return try exactly(type) {
                switch $0 {
                case .integer(let integer): Decimal(integer) as? T
                case .number(let double): DecimalDigits(double).decimal as? T
                case .decimal(let decimal): decimal as? T
                default: nil
                }
            }
        }
        return try T(from: self)
    }

    func unboxBool() throws -> Bool {
        guard case .bool(let value) = value else { throw mismatch(Bool.self) }
        return value
    }

    func unboxString() throws -> String {
        guard case .string(let value) = value else { throw mismatch(String.self) }
        return value
    }

    func unboxDouble() throws -> Double {
        try exactly(Double.self) {
            switch $0 {
            case .integer(let integer): Double(exactly: integer)
            case .number(let double): double
            case .decimal(let decimal): Double(decimal.description).flatMap { DecimalDigits($0) == DecimalDigits(decimal) ? $0 : nil }
            default: nil
            }
        }
    }

    func unboxFloat() throws -> Float {
        try exactly(Float.self) { _ in Float(exactly: try unboxDouble()) }
    }

    func unboxInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try exactly(type) {
            switch $0 {
            case .integer(let integer): T(exactly: integer)
            case .decimal(let decimal): T(decimal.description)
            default: nil
            }
        }
    }

    /// The number as `type` by `convert`, which gives nil if `type` does not hold it exactly.
    private func exactly<T>(_ type: T.Type, _ convert: (JSONValue) throws -> T?) throws -> T {
        switch value {
        case .integer, .number, .decimal:
            guard let converted = try convert(value) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath, debugDescription: "Number \(value.canonicalText) does not fit exactly in \(type)."))
            }
            return converted
        default:
            throw mismatch(type)
        }
    }

    /// The error for a value of another type than `type` (or null where a value must be).
    func mismatch(_ type: Any.Type) -> DecodingError {
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) value but found null instead."))
        }
        return .typeMismatch(
            type, .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(value.typeName) instead."))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    /// The member at `key`, as a decoder.
    private func decoder(for key: Key) throws -> TreeDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return TreeDecoder(value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try decoder(for: key).value { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(for: key).unboxBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(for: key).unboxString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(for: key).unboxDouble() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(for: key).unboxFloat() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(for: key).unboxInteger(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(for: key).unboxInteger(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(for: key).unbox(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        TreeDecoder(members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        TreeDecoder(members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element, as a decoder; the index moves on only once it is decoded.
    private func next(_ type: Any.Type) throws -> TreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath, debugDescription: "Unkeyed container is at end."))
        }
        return TreeDecoder(elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    /// Decodes the next element with `body`, then moves on.
    private mutating func decodeNext<T>(_ type: T.Type, _ body: (TreeDecoder) throws -> T) throws -> T {
        let value = try body(try next(type))
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = try next(Never.self).value else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeNext(type) { try $0.unboxBool() } }
    mutating func decode(_ type: String.Type) throws -> String { try decodeNext(type) { try $0.unboxString() } }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodeNext(type) { try $0.unboxDouble() } }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodeNext(type) { try $0.unboxFloat() } }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeNext(type) { try $0.unboxInteger(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeNext(type) { try $0.unbox(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try decodeNext(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try decodeNext((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try decodeNext((any Decoder).self) { $0 }
    }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        if case .null = decoder.value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try decoder.unboxBool() }
    func decode(_ type: String.Type) throws -> String { try decoder.unboxString() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.unboxDouble() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.unboxFloat() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.unboxInteger(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.unboxInteger(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.unboxInteger(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.unboxInteger(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.unboxInteger(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.unboxInteger(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.unboxInteger(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(type) }
}

/// An array element's place in a coding path.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
