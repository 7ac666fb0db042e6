import Foundation

/// A schema file: a JSON object of key → ``PreferenceSchema`` (`prefsd --schema FILE`,
/// `prefsctl schema load FILE`).
package enum SchemaFile {
    /// Decodes schemas from a file's bytes, checking every key and definition.
    package static func decode(_ data: Data, source: String) throws -> [String: PreferenceSchema] {
        let schemas: [String: PreferenceSchema]
        do {
            schemas = try WireJSON.decode([String: PreferenceSchema].self, from: data)
        } catch let error as PrefsError {
            throw PrefsError(error.code, "\(source): \(error.message)")
        } catch let error as DecodingError {
            throw PrefsError(.invalidSchema, "\(source) is not an object of key → schema: \(error.readableReason)")
        }
        for (key, schema) in schemas {
            try KeyName.validate(key)
            try schema.validateDefinition(for: key)
        }
        return schemas
    }
}

extension JSONValue {
    /// A value typed on a command line: JSON when it parses as JSON, else the text as a string
    /// (so `prefsctl set k hello` stores `"hello"` and `prefsctl set k 14` stores `14`).
    package init(commandLine text: String) {
        self = (try? JSONValue(parsing: text)) ?? .string(text)
    }
}
