import Foundation

/// The exact decimal value of a number's text, in one normal form whatever the spelling: `1.50`,
/// `15e-1` and `0.015E2` are all digits `15`, exponent `-1`. Comparing these is how prefsd knows
/// whether a `Double` or a `Decimal` holds a number exactly as it was written.
struct DecimalDigits: Equatable {
    /// Whether the value is below zero (never for zero).
    var negative: Bool
    /// The significant digits, ASCII, without leading or trailing zeros; empty for zero.
    var digits: [UInt8]
    /// The power of ten the digits are multiplied by.
    var exponent: Int

    /// The value of `text`: JSON's number grammar, or what `Double` and `Decimal` describe
    /// themselves as (`1e-05`, `1.2345678901234567e+19`, `0.000015`); nil for anything else.
    init?(_ text: some Collection<UInt8>) {
        var bytes = text[...]
        negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        let integer = bytes.prefix(while: Self.isDigit)
        bytes = bytes.dropFirst(integer.count)
        var fraction = bytes.prefix(0)
        if bytes.first == UInt8(ascii: ".") {
            fraction = bytes.dropFirst().prefix(while: Self.isDigit)
            bytes = bytes.dropFirst(1 + fraction.count)
        }
        guard !integer.isEmpty || !fraction.isEmpty else { return nil }
        var written = 0
        if let marker = bytes.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            let exponentNegative = bytes.first == UInt8(ascii: "-")
            if exponentNegative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            let exponentDigits = bytes.prefix(while: Self.isDigit)
            guard !exponentDigits.isEmpty else { return nil }
            bytes = bytes.dropFirst(exponentDigits.count)
            // Beyond any number kept, however it is spelt: saturates rather than overflows.
            for digit in exponentDigits { written = min(written * 10 + Int(digit - UInt8(ascii: "0")), 1 << 40) }
            if exponentNegative { written = -written }
        }
        guard bytes.isEmpty else { return nil }
        let all = Array(integer) + Array(fraction)
        let significant = all.drop { $0 == UInt8(ascii: "0") }
        let trailingZeros = significant.reversed().prefix { $0 == UInt8(ascii: "0") }.count
        digits = Array(significant.dropLast(trailingZeros))
        exponent = written - fraction.count + trailingZeros
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// The value as an `Int64`, if it is a whole number within its range.
    var integer: Int64? {
        guard !digits.isEmpty else { return 0 }
        guard exponent >= 0, digits.count + exponent <= 19 else { return nil }
        let text = (negative ? "-" : "") + String(decoding: digits, as: UTF8.self) + String(repeating: "0", count: exponent)
        return Int64(text)
    }

    /// The value as a `Decimal`, if one holds it exactly (up to 38 or 39 significant digits, a
    /// power of ten from -128 to 127).
    var decimal: Decimal? {
        guard digits.count <= 39, let decimal = Decimal(string: (negative ? "-" : "") + String(decoding: digits, as: UTF8.self) + "e\(exponent)")
        else { return nil }
        return DecimalDigits(decimal) == self ? decimal : nil
    }

    /// The value of `double` as written by its shortest description, the form prefsd stores.
    init(_ double: Double) {
        self.init(double.description.utf8)!
    }

    /// The value of `decimal`.
    init?(_ decimal: Decimal) {
        self.init(decimal.description.utf8)
    }

    /// The value of a number; nil for any other value.
    init?(_ value: JSONValue) {
        switch value {
        case .integer(let integer): self.init(String(integer).utf8)
        case .number(let double): self.init(double)
        case .decimal(let decimal): self.init(decimal)
        default: return nil
        }
    }
}

extension DecimalDigits: Comparable {
    /// Orders values exactly.
    static func < (lhs: DecimalDigits, rhs: DecimalDigits) -> Bool {
        if lhs.negative != rhs.negative { return lhs.negative }
        return lhs.negative ? rhs.magnitudeIsBelow(lhs) : lhs.magnitudeIsBelow(rhs)
    }

    /// Whether this value's magnitude is below `other`'s.
    private func magnitudeIsBelow(_ other: DecimalDigits) -> Bool {
        if digits.isEmpty || other.digits.isEmpty { return digits.isEmpty && !other.digits.isEmpty }
        // The power of ten of the first digit decides, then the digits from the first on.
        let (order, otherOrder) = (digits.count + exponent, other.digits.count + other.exponent)
        if order != otherOrder { return order < otherOrder }
        return digits.lexicographicallyPrecedes(other.digits)
    }
}

extension Decimal {
    /// Whether the value is a whole number.
    var isWhole: Bool {
        DecimalDigits(self).map { $0.exponent >= 0 } ?? false
    }
}

extension JSONValue {
    /// The number `text` spells (JSON's number grammar), kept exactly as written
    /// (``exactNumber(_:double:)``). Throws `invalid_value` for a number nothing holds exactly
    /// (more than 38 significant digits, or too far from 1): never a value changed silently.
    static func number(exactly text: some Collection<UInt8>) throws -> JSONValue {
        guard let value = DecimalDigits(text) else {
            throw PrefsError(.invalidJSON, "The body is not valid JSON: '\(String(decoding: text, as: UTF8.self))' is not a number.")
        }
        if let number = exactNumber(value, double: Double(String(decoding: text, as: UTF8.self))) { return number }
        let shown = String(decoding: text, as: UTF8.self)
        throw PrefsError(
            .invalidValue,
            "The number \(shown.truncatedForMessage) cannot be stored exactly: prefsd keeps numbers that a 64-bit integer or a double holds exactly, and others of up to 38 significant digits between 1e-128 and 1e127. Send it as a string to keep it as written."
        )
    }

    /// The one form that holds `value` exactly, given the nearest `Double` to it: an integer that
    /// fits 64 bits as ``integer(_:)``; another whole number as ``decimal(_:)`` if a `Decimal`
    /// holds it (so that its digits read back as digits, not `1e+19`); a number whose `Double` is
    /// exactly it (as the `Double`'s shortest text shows it) as ``number(_:)``; any other as
    /// ``decimal(_:)``. Nil if none holds it exactly.
    static func exactNumber(_ value: DecimalDigits, double: Double?) -> JSONValue? {
        if let integer = value.integer { return .integer(integer) }
        if value.exponent >= 0, let decimal = value.decimal { return .decimal(decimal) }
        if let double, double.isFinite, DecimalDigits(double) == value { return .number(double) }
        return value.decimal.map { .decimal($0) }
    }
}
