/// What a key may hold, like a GSettings schema entry: a type, a default and limits.
///
/// Schemas come from JSON files (`prefsd --schema FILE`, an object of key → schema) and from
/// Swift `PreferenceKey` declarations registered through the API. A value that breaks its
/// key's schema is refused with `invalid_value` and nothing is written.
///
/// ```json
/// { "timeline.fontSize": { "type": "int", "default": 14, "min": 8, "max": 72 },
///   "timeline.mode": { "type": "enum", "choices": ["collapsed", "expanded"], "default": "collapsed" } }
/// ```
public struct PreferenceSchema: Sendable, Hashable {
    /// The kinds of value a schema can require.
    public enum ValueType: String, Sendable, Hashable, Codable, CaseIterable {
        /// `true` or `false`.
        case bool
        /// A whole number; `min`/`max` apply.
        case int
        /// Any number; `min`/`max` apply.
        case double
        /// A string; `maxLength` (in characters) applies.
        case string
        /// One of the strings in `choices`.
        case `enum`
        /// An array of strings; `maxLength` limits the element count.
        case array
        /// Any JSON value.
        case json
    }

    /// The type a value must have.
    public var type: ValueType
    /// The value a key has where no scope sets one.
    public var defaultValue: JSONValue?
    /// The smallest number allowed (`int`, `double`).
    public var minimum: Double?
    /// The largest number allowed (`int`, `double`).
    public var maximum: Double?
    /// The most characters (`string`) or elements (`array`) allowed.
    public var maxLength: Int?
    /// The allowed strings (`enum`).
    public var choices: [String]?
    /// What the key is for, for people.
    public var description: String?
    /// How a device's change that conflicts with the upstream's is resolved (see
    /// ``MergeRule``); nil: ``MergeRule/default``.
    public var merge: MergeRule?

    /// Makes a schema; call ``validateDefinition(for:)`` before trusting it.
    ///
    /// - Parameters:
    ///   - type: The type a value must have.
    ///   - defaultValue: The value a key has where no scope sets one.
    ///   - minimum: The smallest number allowed (`int`, `double`).
    ///   - maximum: The largest number allowed (`int`, `double`).
    ///   - maxLength: The most characters (`string`) or elements (`array`) allowed.
    ///   - choices: The allowed strings (`enum`).
    ///   - description: What the key is for, for people.
    ///   - merge: How conflicting changes from two devices are resolved; nil: the default.
    public init(
        type: ValueType, defaultValue: JSONValue? = nil, minimum: Double? = nil, maximum: Double? = nil,
        maxLength: Int? = nil, choices: [String]? = nil, description: String? = nil, merge: MergeRule? = nil
    ) {
        self.type = type
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.maxLength = maxLength
        self.choices = choices
        self.description = description
        self.merge = merge
    }

    /// Checks that the schema does not contradict itself.
    ///
    /// - Parameter key: The key the schema is for, named in the error.
    /// - Throws: ``PrefsError`` — `invalid_schema` if the schema contradicts itself: an enum
    ///   without choices, `min` above `max`, a default that breaks the schema.
    public func validateDefinition(for key: String) throws {
        func invalid(_ reason: String) -> PrefsError {
            PrefsError(.invalidSchema, "The schema of '\(key)' \(reason).")
        }
        if type == .enum, choices?.isEmpty ?? true {
            throw invalid("is an enum without choices; add \"choices\": [\"a\", \"b\"]")
        }
        if choices != nil, type != .enum {
            throw invalid("has choices but its type is \(type.rawValue), not enum")
        }
        if minimum != nil || maximum != nil, type != .int, type != .double {
            throw invalid("has min/max but its type is \(type.rawValue); they apply to int and double")
        }
        if let minimum, let maximum, minimum > maximum {
            throw invalid("has min \(minimum) above max \(maximum)")
        }
        if let maxLength, maxLength < 0 {
            throw invalid("has a negative maxLength")
        }
        if maxLength != nil, type != .string, type != .array {
            throw invalid("has maxLength but its type is \(type.rawValue); it applies to string and array")
        }
        if let merge, let reason = merge.unfit(for: type) {
            throw invalid("merges by \(merge.rawValue), which \(reason), but its type is \(type.rawValue)")
        }
        if let defaultValue {
            do {
                try validate(defaultValue, for: key)
            } catch let error as PrefsError {
                throw invalid("has a default that breaks it: \(error.message)")
            }
        }
    }

    /// Checks that `value` fits this schema.
    ///
    /// - Parameters:
    ///   - value: The value to check.
    ///   - key: The key it is for, named in the error.
    /// - Throws: ``PrefsError`` — `invalid_value` unless `value` fits this schema.
    public func validate(_ value: JSONValue, for key: String) throws {
        func refuse(_ reason: String) -> PrefsError {
            PrefsError(.invalidValue, "'\(key)' \(reason); the value \(value.canonicalText.truncatedForMessage) was not stored.")
        }
        switch (type, value) {
        case (.json, _):
            return
        case (.bool, .bool):
            return
        case (.int, .integer), (.double, .integer), (.double, .number), (.double, .decimal):
            try checkRange(value, refuse)
        case (.int, .decimal(let number)) where number.isWhole:
            try checkRange(value, refuse)
        case (.string, .string(let text)):
            if let maxLength, text.count > maxLength {
                throw refuse("takes at most \(maxLength) characters, not \(text.count)")
            }
        case (.enum, .string(let text)):
            if let choices, !choices.contains(text) {
                throw refuse("must be one of \(choices.map { "'\($0)'" }.joined(separator: ", "))")
            }
        case (.array, .array(let elements)):
            guard elements.allSatisfy({ if case .string = $0 { true } else { false } }) else {
                throw refuse("must be an array of strings")
            }
            if let maxLength, elements.count > maxLength {
                throw refuse("takes at most \(maxLength) elements, not \(elements.count)")
            }
        default:
            throw refuse("must be of type \(type.rawValue), not \(value.typeName)")
        }
    }

    /// Refuses a number below `minimum` or above `maximum`, compared exactly: as decimal values,
    /// not rounded to a `Double`.
    private func checkRange(_ value: JSONValue, _ refuse: (String) -> PrefsError) throws {
        guard let number = DecimalDigits(value) else { return }
        if let minimum, number < DecimalDigits(minimum) { throw refuse("must be at least \(minimum.compactText)") }
        if let maximum, number > DecimalDigits(maximum) { throw refuse("must be at most \(maximum.compactText)") }
    }
}

extension PreferenceSchema: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case type, `default`, min, max, maxLength, choices, description, merge
    }

    public init(from decoder: any Decoder) throws {
        // Unknown fields are refused, so a typo such as "maxlen" is not silently ignored.
        do {
            try StrictFields.check(decoder, allowed: CodingKeys.allCases.map(\.stringValue), in: "a schema")
        } catch let error as PrefsError {
            throw PrefsError(.invalidSchema, error.message)
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let typeName = try container.decode(String.self, forKey: .type)
        guard let type = ValueType(rawValue: typeName) else {
            throw PrefsError(
                .invalidSchema,
                "Unknown schema type '\(typeName)'; use one of \(ValueType.allCases.map(\.rawValue).joined(separator: ", "))."
            )
        }
        let merge = try container.decodeIfPresent(String.self, forKey: .merge).map { name in
            guard let rule = MergeRule(rawValue: name) else {
                throw PrefsError(
                    .invalidSchema,
                    "Unknown merge rule '\(name)'; use one of \(MergeRule.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return rule
        }
        self.init(
            type: type,
            defaultValue: try container.decodeIfPresent(JSONValue.self, forKey: .default),
            minimum: try container.decodeIfPresent(Double.self, forKey: .min),
            maximum: try container.decodeIfPresent(Double.self, forKey: .max),
            maxLength: try container.decodeIfPresent(Int.self, forKey: .maxLength),
            choices: try container.decodeIfPresent([String].self, forKey: .choices),
            description: try container.decodeIfPresent(String.self, forKey: .description),
            merge: merge
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type.rawValue, forKey: .type)
        try container.encodeIfPresent(defaultValue, forKey: .default)
        try container.encodeIfPresent(minimum, forKey: .min)
        try container.encodeIfPresent(maximum, forKey: .max)
        try container.encodeIfPresent(maxLength, forKey: .maxLength)
        try container.encodeIfPresent(choices, forKey: .choices)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(merge, forKey: .merge)
    }
}

extension Double {
    /// `3` rather than `3.0` for whole numbers.
    var compactText: String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}

extension String {
    /// At most 80 characters, for quoting a value inside an error message.
    package var truncatedForMessage: String {
        count <= 80 ? self : String(prefix(77)) + "..."
    }
}
