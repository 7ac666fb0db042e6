import Foundation

/// A typed preference, declared once with its name and default (like SwiftUI's `EnvironmentKey`).
///
/// ```swift
/// struct FontSizeKey: PreferenceKey {
///     static let name = "timeline.fontSize"
///     static let defaultValue = 14
/// }
/// extension PreferenceValues {
///     var fontSize: Int {
///         get { self[FontSizeKey.self] }
///         set { self[FontSizeKey.self] = newValue }
///     }
/// }
/// ```
///
/// Or in one line with the `@Preference` macro. The key path (`\.fontSize`) then names the key
/// everywhere: the service's typed calls, the scope context and the observation wrappers.
public protocol PreferenceKey: Sendable {
    /// The stored value's type.
    associatedtype Value: Codable & Sendable & Equatable

    /// The key's dotted name, e.g. `timeline.fontSize`.
    static var name: String { get }
    /// The value where no scope sets one.
    static var defaultValue: Value { get }
    /// How a device's change that conflicts with another's is resolved when the store syncs;
    /// by default ``MergeRule/lww``, the later change.
    static var merge: MergeRule { get }
    /// The schema registered for the key; by default, one inferred from `Value`, the default
    /// and ``merge``.
    static var schema: PreferenceSchema { get }
}

extension PreferenceKey {
    public static var merge: MergeRule { .default }

    /// The schema inferred from `Value`, the default (string enums: their cases as choices) and
    /// ``merge`` (named only when it is not the default).
    public static var schema: PreferenceSchema {
        PreferenceSchema(
            type: PreferenceSchema.ValueType.inferred(for: Value.self), defaultValue: try? JSONValue(encoding: defaultValue),
            merge: merge == .default ? nil : merge
        ).withChoices(of: Value.self)
    }
}

extension PreferenceSchema.ValueType {
    /// The schema type that fits a Swift type: `Bool` → bool, integers → int, `Double` → double,
    /// `String` → string, string enums → enum, `[String]` → array, anything else → json.
    ///
    /// - Parameter type: The Swift type.
    /// - Returns: The schema type of its values.
    public static func inferred<T>(for type: T.Type) -> Self {
        switch type {
        case is Bool.Type: .bool
        case is Int.Type, is Int64.Type, is Int32.Type: .int
        case is Double.Type, is Float.Type: .double
        case is String.Type: .string
        case is [String].Type: .array
        case is any (CaseIterable & RawRepresentable<String>).Type: .enum
        default: .json
        }
    }
}

extension PreferenceSchema {
    /// For a `CaseIterable` string enum: its raw values as the choices.
    func withChoices<T>(of type: T.Type) -> PreferenceSchema {
        guard let cases = type as? any (CaseIterable & RawRepresentable<String>).Type else { return self }
        var schema = self
        schema.choices = Self.rawValues(of: cases)
        return schema
    }

    private static func rawValues<E: CaseIterable & RawRepresentable<String>>(of type: E.Type) -> [String] {
        E.allCases.map(\.rawValue)
    }
}

extension JSONValue {
    /// The JSON form of any `Encodable` value.
    ///
    /// - Parameter value: The value to encode.
    /// - Throws: What `JSONEncoder` throws for a value it cannot encode, or ``PrefsError``
    ///   `invalid_value` for a number JSON cannot hold exactly.
    public init(encoding value: some Encodable) throws {
        self = try JSONValue(parsing: JSONEncoder().encode(value))
    }

    /// The value decoded as `T`, or nil if it does not fit.
    ///
    /// - Parameter type: The type to decode.
    /// - Returns: The decoded value, or nil if the JSON does not fit `type`.
    public func decoded<T: Decodable>(as type: T.Type) -> T? {
        try? JSONDecoder().decode(T.self, from: canonicalData)
    }
}
