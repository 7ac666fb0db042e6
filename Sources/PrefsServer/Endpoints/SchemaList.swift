import PrefsKit

/// The answer of `GET /v1/schema`.
struct SchemaList: Codable, Sendable {
    var schemas: [String: PreferenceSchema]
}
