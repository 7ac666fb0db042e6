extension KeyedDecodingContainer {
    /// The value at `key`, or nil when the body has no such field. Unlike `decodeIfPresent`,
    /// which reads `null` as absent, a `null` is refused as any value of another type is: a
    /// request body's optional field is either absent or of its documented type.
    /// - Parameters:
    ///   - type: The type of the field's value.
    ///   - key: The field.
    /// - Returns: The value, or nil when the field is absent.
    /// - Throws: `DecodingError` when the field is `null` or not a `type`.
    func decodeUnlessAbsent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
}
