import Foundation
import PrefsKit
import Testing

@Suite("JSON values")
struct JSONValueTests {
    @Test("Parses every JSON type")
    func parsesEveryType() throws {
        #expect(try JSONValue(parsing: "null") == .null)
        #expect(try JSONValue(parsing: "true") == .bool(true))
        #expect(try JSONValue(parsing: "false") == .bool(false))
        #expect(try JSONValue(parsing: "42") == .integer(42))
        #expect(try JSONValue(parsing: "-7") == .integer(-7))
        #expect(try JSONValue(parsing: "2.5") == .number(2.5))
        #expect(try JSONValue(parsing: #""hi""#) == .string("hi"))
        #expect(try JSONValue(parsing: "[1, \"a\", null]") == .array([.integer(1), .string("a"), .null]))
        #expect(
            try JSONValue(parsing: #"{"b": {"c": [true]}, "a": 1}"#)
                == .object(["a": .integer(1), "b": .object(["c": .array([.bool(true)])])]))
    }

    /// What JSONEncoder writes with the store's settings: what ``JSONValue/canonicalText`` must equal.
    static func encoderText(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("The canonical text is byte for byte what JSONEncoder writes")
    func canonicalTextMatchesTheEncoder() throws {
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        let values: [JSONValue] = [
            .null, true, false, 0, -1, .integer(.max), .integer(.min), 2.5, -0.0, 1e300, 1.0, 0.1, 123456789.125,
            "", "plain", "a/b", "quote \" back \\ slash", .string(controls), "é ☃ 𝄞 \u{7F} \u{2028}",
            [], [1, "two", [3.5, nil]], [:],
            ["b": 1, "a": 2, "B": 3, "é": 4, "aa": 5, "a b": 6, "": 7, "Z": ["y": [], "x": [:]]],
        ]
        for value in values {
            let expected = try Self.encoderText(value)
            #expect(value.canonicalText == expected)
            #expect(value.canonicalData == Data(expected.utf8))
        }
    }

    @Test("The direct parse of common texts gives what the full parser gives")
    func directParseMatchesTheDecoder() throws {
        let texts = [
            "true", "false", "null", "0", "-0", "7", "-7", "01", "-", "--1", "1.0", "1e3", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "\"\"", "\"plain\"", "\"é☃\"",
            "\"a\\nb\"", "\"tab\there\"", "\"unterminated", "\"", " 1", "1 ", "tru", "nulls", "[1]", "{\"a\":1}",
        ]
        for text in texts {
            let direct = try? JSONValue(parsing: text)
            let full = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(direct?.typeName == full?.typeName, "\(text)")
            #expect(direct?.canonicalText == full?.canonicalText, "\(text)")
        }
    }

    @Test("0 and 1 are integers, not booleans; true is not an integer")
    func booleansAndIntegersStayApart() throws {
        #expect(try JSONValue(parsing: "0") == .integer(0))
        #expect(try JSONValue(parsing: "1") == .integer(1))
        #expect(try JSONValue(parsing: "[true, 1]") == .array([.bool(true), .integer(1)]))
    }

    @Test("Integers and other numbers round-trip as written")
    func integerVersusNumber() throws {
        for text in ["1", "0", "-3", "9223372036854775807", "-9223372036854775808", "2.5", "-0.125", "1e+300", "100000000000000000000"] {
            let value = try JSONValue(parsing: text)
            #expect(value.canonicalText == text, "\(text) came back as \(value.canonicalText)")
            #expect(try JSONValue(parsing: value.canonicalText) == value)
        }
        #expect(JSONValue.integer(1).canonicalText == "1")
        #expect(JSONValue.number(1.5).canonicalText == "1.5")
        // Beyond Int64: kept exactly, not refused or rounded.
        #expect(try JSONValue(parsing: "9223372036854775808") == .decimal(Decimal(string: "9223372036854775808")!))
        #expect(try JSONValue(parsing: "9223372036854775808").canonicalText == "9223372036854775808")
    }

    @Test("Canonical text is compact with object keys sorted, at every depth")
    func canonicalText() throws {
        let value = try JSONValue(parsing: #"{ "zeta": 1, "alpha": { "y": [ 2, { "b": 1, "a": 0 } ], "x": "/path" } }"#)
        #expect(value.canonicalText == #"{"alpha":{"x":"/path","y":[2,{"a":0,"b":1}]},"zeta":1}"#)
        #expect(value.canonicalData == Data(value.canonicalText.utf8))
        #expect(value.description == value.canonicalText)
    }

    @Test("Equal values have the same canonical bytes whatever the input order")
    func canonicalIsStable() throws {
        let one = try JSONValue(parsing: #"{"a":1,"b":2,"c":{"d":3,"e":4}}"#)
        let two = try JSONValue(parsing: #"{"c":{"e":4,"d":3},"b":2,"a":1}"#)
        #expect(one == two)
        #expect(one.canonicalData == two.canonicalData)
    }

    @Test("Strings are escaped, slashes are not")
    func escaping() throws {
        let value = JSONValue.string("a \"quote\" / and\nnewline")
        #expect(value.canonicalText == #""a \"quote\" / and\nnewline""#)
        #expect(try JSONValue(parsing: value.canonicalText) == value)
        let unicode = JSONValue.string("héllo ✓")
        #expect(try JSONValue(parsing: unicode.canonicalText) == unicode)
    }

    @Test(
        "Invalid JSON is refused with invalid_json",
        arguments: ["", "{", "[1,", "nul", "{'a': 1}", "{\"a\" 1}", "tru", "01x", "\"unterminated"]
    )
    func invalid(text: String) {
        let error = #expect(throws: PrefsError.self) { try JSONValue(parsing: text) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.message.hasPrefix("The body is not valid JSON") == true)
    }

    @Test("Parses from bytes too")
    func parsesBytes() throws {
        #expect(try JSONValue(parsing: Data("[1,2]".utf8)) == [1, 2])
        #expect(try JSONValue(parsing: Array("{\"k\":\"v\"}".utf8)) == ["k": "v"])
    }

    @Test("Literals build the matching cases")
    func literals() {
        let value: JSONValue = ["a": [1, 2.5, "s", true, nil]]
        #expect(value == .object(["a": .array([.integer(1), .number(2.5), .string("s"), .bool(true), .null])]))
    }

    @Test("Type names for messages")
    func typeNames() {
        #expect(JSONValue.null.typeName == "null")
        #expect(JSONValue.bool(true).typeName == "boolean")
        #expect(JSONValue.integer(1).typeName == "integer")
        #expect(JSONValue.number(1.5).typeName == "number")
        #expect(JSONValue.string("").typeName == "string")
        #expect(JSONValue.array([]).typeName == "array")
        #expect(JSONValue.object([:]).typeName == "object")
    }

    @Test("Codable inside other types")
    func codableNested() throws {
        struct Box: Codable, Equatable { var value: JSONValue }
        let box = Box(value: ["n": 1, "list": ["x"]])
        let data = try JSONEncoder().encode(box)
        #expect(try JSONDecoder().decode(Box.self, from: data) == box)
    }

    @Test("A command-line value is JSON when it parses, else a string")
    func commandLine() {
        #expect(JSONValue(commandLine: "14") == .integer(14))
        #expect(JSONValue(commandLine: "true") == .bool(true))
        #expect(JSONValue(commandLine: #""quoted""#) == .string("quoted"))
        #expect(JSONValue(commandLine: "hello") == .string("hello"))
        #expect(JSONValue(commandLine: "[1") == .string("[1"))
    }
}
