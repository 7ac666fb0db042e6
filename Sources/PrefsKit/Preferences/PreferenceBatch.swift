

/// A batch of operations, as `POST /v1/prefs:batch` takes it.
public struct PreferenceBatch: Codable, Sendable, Hashable {
    /// The operations, applied in order.
    public var operations: [PreferenceOperation]

    /// A batch of these operations.
    ///
    /// - Parameter operations: The operations, applied in order.
    public init(operations: [PreferenceOperation]) {
        self.operations = operations
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case operations
    }

    /// Decodes a batch, refusing unknown fields.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: ``PrefsError`` `invalid_request` for an unknown field; `DecodingError` for a
    ///   missing or mistyped one.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a batch")
        operations = try decoder.container(keyedBy: CodingKeys.self).decode([PreferenceOperation].self, forKey: .operations)
    }
}
