

/// A batch of operations, as `POST /v1/prefs:batch` takes it.
public struct PreferenceBatch: Codable, Sendable, Hashable {
    /// The operations, applied in order.
    public var operations: [PreferenceOperation]

    /// A batch of these operations.
    public init(operations: [PreferenceOperation]) {
        self.operations = operations
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case operations
    }

    /// Decodes a batch, refusing unknown fields.
    public init(from decoder: any Decoder) throws {
        try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a batch")
        operations = try decoder.container(keyedBy: CodingKeys.self).decode([PreferenceOperation].self, forKey: .operations)
    }
}
