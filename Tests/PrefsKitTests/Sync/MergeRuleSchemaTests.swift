import Foundation
import PrefsKit
import Testing

private struct VolumeKey: PreferenceKey {
    static let name = "player.volume"
    static let defaultValue = 50
    static let merge = MergeRule.max
}

private struct WidthKey: PreferenceKey {
    static let name = "timeline.width"
    static let defaultValue = 600
}

@Suite("Merge rules in schemas")
struct MergeRuleSchemaTests {
    private func decode(_ json: String) throws -> PreferenceSchema {
        try JSONDecoder().decode(PreferenceSchema.self, from: Data(json.utf8))
    }

    @Test("A schema file names a rule with \"merge\"; none means the default, and is not written")
    func decodes() throws {
        let schema = try decode(#"{"type": "array", "merge": "union"}"#)
        #expect(schema.merge == .union)
        #expect(schema.canonicalText == #"{"merge":"union","type":"array"}"#)
        let plain = try decode(#"{"type": "int", "default": 3}"#)
        #expect(plain.merge == nil)
        #expect(plain.canonicalText == #"{"default":3,"type":"int"}"#)
    }

    @Test("An unknown rule is refused, naming the rules there are")
    func unknownRule() {
        let error = #expect(throws: PrefsError.self) { try decode(#"{"type": "int", "merge": "newest"}"#) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("lww, max, min, union, upstream") == true)
    }

    @Test("A rule that does not fit the type is refused", arguments: [
        (#"{"type": "string", "merge": "max"}"#, "max"), (#"{"type": "bool", "merge": "min"}"#, "min"),
        (#"{"type": "int", "merge": "union"}"#, "union"),
    ])
    func unfitRule(json: String, rule: String) throws {
        let error = #expect(throws: PrefsError.self) { try decode(json).validateDefinition(for: "k.x") }
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("merges by \(rule)") == true)
    }

    @Test("Every rule fits the types it names", arguments: [
        ("lww", "json"), ("upstream", "enum"), ("max", "int"), ("min", "double"), ("union", "array"),
    ])
    func fittingRule(rule: String, type: String) throws {
        let choices = type == "enum" ? #", "choices": ["a"]"# : ""
        try decode(#"{"type": "\#(type)", "merge": "\#(rule)"\#(choices)}"#).validateDefinition(for: "k.x")
    }

    @Test("A PreferenceKey's merge is in its schema; the default one is left out")
    func preferenceKeys() {
        #expect(VolumeKey.schema.merge == .max)
        #expect(WidthKey.merge == .lww)
        #expect(WidthKey.schema.merge == nil)
    }
}
