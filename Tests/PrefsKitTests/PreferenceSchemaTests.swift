import Foundation
import PrefsKit
import Testing

@Suite("Preference schemas")
struct PreferenceSchemaTests {
    private func refusal(_ schema: PreferenceSchema, _ value: JSONValue) -> PrefsError? {
        #expect(throws: PrefsError.self) { try schema.validate(value, for: "k.x") }
    }

    private func decode(_ json: String) throws -> PreferenceSchema {
        try JSONDecoder().decode(PreferenceSchema.self, from: Data(json.utf8))
    }

    @Test("bool takes booleans only")
    func bool() throws {
        let schema = PreferenceSchema(type: .bool)
        try schema.validate(true, for: "k")
        try schema.validate(false, for: "k")
        for value: JSONValue in [1, 0, "true", .null, [true]] {
            #expect(refusal(schema, value)?.code == .invalidValue)
        }
    }

    @Test("int takes integers within min/max, not fractional numbers")
    func int() throws {
        let schema = PreferenceSchema(type: .int, minimum: 8, maximum: 72)
        try schema.validate(8, for: "k")
        try schema.validate(72, for: "k")
        try schema.validate(14, for: "k")
        let low = refusal(schema, 7)
        #expect(low?.code == .invalidValue)
        #expect(low?.message.contains("at least 8") == true)
        let high = refusal(schema, 73)
        #expect(high?.message.contains("at most 72") == true)
        #expect(refusal(schema, 14.5)?.message.contains("must be of type int, not number") == true)
        #expect(refusal(schema, "14")?.code == .invalidValue)
        // Unbounded int takes any integer.
        try PreferenceSchema(type: .int).validate(.integer(.min), for: "k")
    }

    @Test("double takes integers and numbers within min/max")
    func double() throws {
        let schema = PreferenceSchema(type: .double, minimum: 0.5, maximum: 2)
        try schema.validate(0.5, for: "k")
        try schema.validate(1, for: "k")
        try schema.validate(2, for: "k")
        #expect(refusal(schema, 0.25)?.code == .invalidValue)
        #expect(refusal(schema, 3)?.code == .invalidValue)
        #expect(refusal(schema, 2.0001)?.code == .invalidValue)
        #expect(refusal(schema, true)?.code == .invalidValue)
    }

    @Test("string takes strings up to maxLength characters")
    func string() throws {
        let schema = PreferenceSchema(type: .string, maxLength: 3)
        try schema.validate("", for: "k")
        try schema.validate("abc", for: "k")
        // Characters, not bytes: three accented letters are six UTF-8 bytes.
        try schema.validate("éèê", for: "k")
        let long = refusal(schema, "abcd")
        #expect(long?.code == .invalidValue)
        #expect(long?.message.contains("at most 3 characters, not 4") == true)
        #expect(refusal(schema, 1)?.code == .invalidValue)
        try PreferenceSchema(type: .string).validate(.string(String(repeating: "x", count: 10_000)), for: "k")
    }

    @Test("enum takes one of its choices")
    func enumeration() throws {
        let schema = PreferenceSchema(type: .enum, choices: ["collapsed", "expanded"])
        try schema.validate("collapsed", for: "k")
        try schema.validate("expanded", for: "k")
        let other = refusal(schema, "hidden")
        #expect(other?.code == .invalidValue)
        #expect(other?.message.contains("'collapsed', 'expanded'") == true)
        #expect(refusal(schema, "Collapsed")?.code == .invalidValue)
        #expect(refusal(schema, 1)?.code == .invalidValue)
    }

    @Test("array takes arrays of strings, up to maxLength elements")
    func array() throws {
        let schema = PreferenceSchema(type: .array, maxLength: 2)
        try schema.validate([], for: "k")
        try schema.validate(["a", "b"], for: "k")
        #expect(refusal(schema, ["a", "b", "c"])?.message.contains("at most 2 elements, not 3") == true)
        #expect(refusal(schema, ["a", 1])?.message.contains("array of strings") == true)
        #expect(refusal(schema, "a")?.code == .invalidValue)
    }

    @Test("json takes anything")
    func json() throws {
        let schema = PreferenceSchema(type: .json)
        for value: JSONValue in [1, "s", true, ["a": [1, nil]], [1, 2], 2.5] {
            try schema.validate(value, for: "k")
        }
    }

    @Test("A refusal names the key and quotes the value")
    func refusalMessage() {
        let error = #expect(throws: PrefsError.self) {
            try PreferenceSchema(type: .int).validate("big", for: "timeline.fontSize")
        }
        #expect(error?.message.contains("'timeline.fontSize'") == true)
        #expect(error?.message.contains(#""big""#) == true)
        #expect(error?.message.contains("not stored") == true)
    }

    // MARK: - Definitions

    @Test("A consistent definition passes validateDefinition")
    func validDefinitions() throws {
        try PreferenceSchema(type: .int, defaultValue: 14, minimum: 8, maximum: 72).validateDefinition(for: "k")
        try PreferenceSchema(type: .enum, defaultValue: "a", choices: ["a", "b"]).validateDefinition(for: "k")
        try PreferenceSchema(type: .string, defaultValue: "hi", maxLength: 2).validateDefinition(for: "k")
        try PreferenceSchema(type: .array, defaultValue: ["x"], maxLength: 1).validateDefinition(for: "k")
        try PreferenceSchema(type: .bool, defaultValue: false, description: "Flag").validateDefinition(for: "k")
        try PreferenceSchema(type: .json, defaultValue: ["any": [1]]).validateDefinition(for: "k")
        try PreferenceSchema(type: .double, minimum: 1, maximum: 1).validateDefinition(for: "k")
    }

    @Test(
        "A contradictory definition is refused with invalid_schema",
        arguments: [
            PreferenceSchema(type: .enum),
            PreferenceSchema(type: .enum, choices: []),
            PreferenceSchema(type: .string, choices: ["a"]),
            PreferenceSchema(type: .string, minimum: 1),
            PreferenceSchema(type: .bool, maximum: 1),
            PreferenceSchema(type: .int, minimum: 5, maximum: 4),
            PreferenceSchema(type: .string, maxLength: -1),
            PreferenceSchema(type: .int, maxLength: 3),
        ]
    )
    func contradictoryDefinition(schema: PreferenceSchema) {
        let error = #expect(throws: PrefsError.self) { try schema.validateDefinition(for: "k.x") }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("'k.x'") == true)
    }

    @Test(
        "A default that breaks the schema is refused by validateDefinition",
        arguments: [
            PreferenceSchema(type: .int, defaultValue: 100, maximum: 72),
            PreferenceSchema(type: .int, defaultValue: "14"),
            PreferenceSchema(type: .enum, defaultValue: "c", choices: ["a", "b"]),
            PreferenceSchema(type: .string, defaultValue: "long", maxLength: 2),
            PreferenceSchema(type: .array, defaultValue: [1]),
            PreferenceSchema(type: .bool, defaultValue: 0),
        ]
    )
    func breakingDefault(schema: PreferenceSchema) {
        let error = #expect(throws: PrefsError.self) { try schema.validateDefinition(for: "k.x") }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("default that breaks it") == true)
    }

    // MARK: - Coding

    @Test("Decodes the file form, with min/max/default names")
    func decodes() throws {
        let schema = try decode(#"{"type": "int", "default": 14, "min": 8, "max": 72, "description": "Font size"}"#)
        #expect(schema == PreferenceSchema(type: .int, defaultValue: 14, minimum: 8, maximum: 72, description: "Font size"))
        let enumeration = try decode(#"{"type": "enum", "choices": ["a", "b"], "default": "a"}"#)
        #expect(enumeration.choices == ["a", "b"])
        #expect(enumeration.defaultValue == "a")
        let text = try decode(#"{"type": "string", "maxLength": 5}"#)
        #expect(text.maxLength == 5)
    }

    @Test("Every type name decodes", arguments: PreferenceSchema.ValueType.allCases)
    func typeNames(type: PreferenceSchema.ValueType) throws {
        #expect(try decode(#"{"type": "\#(type.rawValue)"}"#).type == type)
    }

    @Test("Unknown fields are refused, naming the field")
    func unknownField() {
        let error = #expect(throws: PrefsError.self) { try decode(#"{"type": "string", "maxlen": 3}"#) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("'maxlen'") == true)
    }

    @Test("An unknown type is refused, listing the known ones")
    func unknownType() {
        let error = #expect(throws: PrefsError.self) { try decode(#"{"type": "integer"}"#) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("'integer'") == true)
        #expect(error?.message.contains("bool, int, double, string, enum, array, json") == true)
    }

    @Test("A schema without a type does not decode")
    func missingType() {
        #expect(throws: (any Error).self) { try decode(#"{"default": 1}"#) }
    }

    @Test("Encode then decode gives the same schema")
    func roundTrip() throws {
        let schemas = [
            PreferenceSchema(type: .int, defaultValue: 14, minimum: 8, maximum: 72, description: "Size"),
            PreferenceSchema(type: .enum, defaultValue: "a", choices: ["a", "b"]),
            PreferenceSchema(type: .array, defaultValue: ["x"], maxLength: 4),
            PreferenceSchema(type: .json),
        ]
        for schema in schemas {
            let data = try JSONEncoder().encode(schema)
            #expect(try JSONDecoder().decode(PreferenceSchema.self, from: data) == schema)
        }
        let encoded = try JSONValue(parsing: JSONEncoder().encode(schemas[0]))
        #expect(encoded == ["type": "int", "default": 14, "min": 8, "max": 72, "description": "Size"])
    }

    @Test("A schema file is an object of key to schema; every entry is checked")
    func schemaFile() throws {
        let schemas = try SchemaFile.decode(
            Data(#"{"timeline.fontSize": {"type": "int", "default": 14}, "a.mode": {"type": "enum", "choices": ["x"]}}"#.utf8),
            source: "prefs.json")
        #expect(schemas.keys.sorted() == ["a.mode", "timeline.fontSize"])

        let badKey = #expect(throws: PrefsError.self) {
            try SchemaFile.decode(Data(#"{"Bad": {"type": "int"}}"#.utf8), source: "f.json")
        }
        #expect(badKey?.code == .invalidKey)
        let badDefault = #expect(throws: PrefsError.self) {
            try SchemaFile.decode(Data(#"{"k": {"type": "int", "default": "x"}}"#.utf8), source: "f.json")
        }
        #expect(badDefault?.code == .invalidSchema)
        let unknown = #expect(throws: PrefsError.self) {
            try SchemaFile.decode(Data(#"{"k": {"type": "int", "mni": 1}}"#.utf8), source: "f.json")
        }
        #expect(unknown?.code == .invalidSchema)
        #expect(unknown?.message.hasPrefix("f.json: ") == true)
        let notObject = #expect(throws: PrefsError.self) {
            try SchemaFile.decode(Data("[1]".utf8), source: "f.json")
        }
        #expect(notObject?.code == .invalidSchema)
        #expect(notObject?.message.contains("f.json") == true)
    }
}
