import Foundation

/// The JSON the API speaks, in one place for the server, the client and `prefsctl`: object keys
/// sorted, slashes bare, dates as ISO 8601 with milliseconds (`2026-11-21T14:25:07.123Z`).
package enum WireJSON {
    /// An encoder for API bodies and events; `pretty` for people.
    package static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(text(of: date))
        }
        return encoder
    }

    /// A `JSONDecoder` for API bodies and events; takes dates with or without fractions of a
    /// second. It reads every number into a `Double` or `Decimal` first: ``decode(_:from:)``
    /// keeps each exactly, and is what prefsd decodes with.
    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not an ISO 8601 date."))
            }
            return date
        }
        return decoder
    }

    /// Decodes `type` from API JSON, keeping every number exactly as written: a ``JSONValue`` in
    /// it holds the number itself, and a Swift number is given only if its type holds it exactly.
    /// Throws ``PrefsError`` `invalid_json` for text that is not JSON, `invalid_value` for a
    /// number no type holds exactly, and a `DecodingError` for JSON of another shape.
    package static func decode<T: Decodable>(_ type: T.Type, from data: some DataProtocol) throws -> T {
        try JSONValueDecoder.decode(type, from: try JSONValue(parsing: data))
    }

    /// The date an ISO 8601 text with or without fractions of a second stands for.
    package static func date(from text: String) -> Date? {
        (try? withMilliseconds.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    private static let withMilliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-21T14:25:07.123Z`: milliseconds rounded, then written digit by digit, so a date
    /// read back from its text writes the same text again (formatting a fraction truncates, and
    /// .180 read back may be .17999…).
    package static func text(of date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, positiveFraction) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let whole = Date(timeIntervalSince1970: Double(wholeSeconds)).formatted(Date.ISO8601FormatStyle())
        let digits = String(positiveFraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
