import Foundation

/// A schema as JSON: the sorted-key text a store keeps, and the value `schema` change events
/// carry.
extension PreferenceSchema {
    /// Decodes a schema from JSON.
    ///
    /// - Parameter json: The schema's JSON text, as UTF-8 bytes.
    /// - Throws: ``PrefsError`` `invalid_json` for text that is not JSON; a `DecodingError` for
    ///   JSON that is not a schema.
    public init(json: Data) throws {
        self = try WireJSON.decode(PreferenceSchema.self, from: json)
    }

    /// The schema as sorted-key JSON, the form a store keeps.
    public var canonicalText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The schema as a JSON value, as `schema` change events carry it.
    public var jsonValue: JSONValue {
        (try? JSONValue(parsing: canonicalText)) ?? .null
    }
}
