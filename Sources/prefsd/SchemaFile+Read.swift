import Foundation
import PrefsKit

extension SchemaFile {
    /// Reads and checks a schema file.
    static func read(_ path: String) throws -> [String: PreferenceSchema] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PrefsError(.notFound, "Cannot read the schema file \(path).")
        }
        return try decode(data, source: path)
    }
}
