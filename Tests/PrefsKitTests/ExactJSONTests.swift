import Foundation
import PrefsKit
import Testing

/// Every JSON number kept exactly as written, or refused: never rounded. JSON read strictly.
@Suite("Exact JSON")
struct ExactJSONTests {
    /// Numbers neither an `Int64` nor a `Double` holds exactly, in their canonical spelling.
    static let exactNumbers = [
        "9223372036854775808", "-9223372036854775809", "12345678901234567890", "18446744073709551616",
        "0.10000000000000000001", "-123456789012345678901234567890.12345678", "99999999999999999999999999999999999999",
        "10000000000000000000", "100000000000000000000000000000000000000000000000000",
    ]

    @Test("Numbers no Int64 or Double holds exactly are kept as written", arguments: exactNumbers)
    func keptAsWritten(text: String) throws {
        let value = try JSONValue(parsing: text)
        guard case .decimal = value else { return #expect(Bool(false), "\(text) is \(value)") }
        #expect(value.canonicalText == text)
        #expect(try JSONValue(parsing: value.canonicalText) == value)
        // Inside other JSON, through WireJSON, and through a JSONDecoder of prefsd's own text.
        #expect(try JSONValue(parsing: "[\(text)]") == [value])
        #expect(try WireJSON.decode([String: JSONValue].self, from: Data(#"{"n":\#(text)}"#.utf8)) == ["n": value])
        let encoded = try JSONEncoder().encode(["n": value])
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"n":\#(text)}"#)
        #expect(try JSONDecoder().decode([String: JSONValue].self, from: encoded) == ["n": value])
    }

    @Test("Spellings of one number are one value, in its smallest exact form")
    func spellings() throws {
        #expect(try JSONValue(parsing: "1.0") == .integer(1))
        #expect(try JSONValue(parsing: "1e2") == .integer(100))
        #expect(try JSONValue(parsing: "-0") == .integer(0))
        #expect(try JSONValue(parsing: "-0.0e5") == .integer(0))
        #expect(try JSONValue(parsing: "1.50").canonicalText == "1.5")
        #expect(try JSONValue(parsing: "1e20").canonicalText == "100000000000000000000")
        #expect(try JSONValue(parsing: "1e300") == .number(1e300))
        #expect(try JSONValue(parsing: "12345678901234567890.000") == (try JSONValue(parsing: "12345678901234567890")))
        #expect(try JSONValue(parsing: "1.234567890123456789E+19").canonicalText == "12345678901234567890")
        #expect(try JSONValue(parsing: "1e-200") == .number(1e-200))
        // Equal across cases, hashing alike.
        let pairs: [(JSONValue, JSONValue)] = [
            (.decimal(5), .integer(5)), (.decimal(Decimal(string: "0.5")!), .number(0.5)), (.integer(3), .number(3)),
        ]
        for (a, b) in pairs {
            #expect(a == b)
            #expect(a.hashValue == b.hashValue)
        }
        #expect(JSONValue.decimal(Decimal(string: "12345678901234567890")!) != .number(1.2345678901234567e19))
        #expect(JSONValue.decimal(Decimal(string: "12345678901234567890")!).typeName == "integer")
        #expect(JSONValue.decimal(Decimal(string: "0.10000000000000000001")!).typeName == "number")
    }

    @Test(
        "A number nothing holds exactly is refused with invalid_value",
        arguments: ["1e400", "-1e400", "1e-400", "1234567890123456789012345678901234567890123", "0.12345678901234567890123456789012345678901"])
    func refused(text: String) {
        let error = #expect(throws: PrefsError.self) { try JSONValue(parsing: text) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("cannot be stored exactly") == true)
        let inBody = #expect(throws: PrefsError.self) { try WireJSON.decode(PreferenceBatch.self, from: Data(#"{"operations":[{"op":"set","key":"k","value":\#(text)}]}"#.utf8)) }
        #expect(inBody?.code == .invalidValue)
    }

    @Test(
        "Text that is not strictly JSON is invalid_json",
        arguments: [
            #"{"a":1,"a":2}"#, "[1,]", #"{"a":1,}"#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\x""#, "\"\u{1}\"", "01", "1.",
            ".5", "-", "1e", "+1", "NaN", "Infinity", "[1 2]", #"{"a" 1}"#, "nul", "\"abc", "[" , "",
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
        ])
    func strict(text: String) {
        let error = #expect(throws: PrefsError.self) { try JSONValue(parsing: text) }
        #expect(error?.code == .invalidJSON, "\(text.prefix(20))")
        #expect(error?.message.hasPrefix("The body is not valid JSON: ") == true)
    }

    @Test("What strict JSON allows")
    func allowed() throws {
        #expect(try JSONValue(parsing: "\u{FEFF} [ 1 ,\t\"a\" ]\r\n") == [1, "a"])
        #expect(try JSONValue(parsing: #""\ud83d\ude00 \u00e9\/\b\f\n\r\t\"\\""#) == .string("😀 é/\u{8}\u{C}\n\r\t\"\\"))
        #expect(try JSONValue(parsing: String(repeating: "[", count: 512) + String(repeating: "]", count: 512)) != .null)
        #expect(throws: PrefsError.self) { try JSONValue(parsing: Data([0x22, 0xFF, 0x22])) }
    }

    @Test("WireJSON gives a Swift number only where its type holds it exactly")
    func swiftNumbers() throws {
        struct Numbers: Decodable { var int: Int?; var double: Double?; var unsigned: UInt64?; var decimal: Decimal? }
        func decode(_ json: String) throws -> Numbers { try WireJSON.decode(Numbers.self, from: Data(json.utf8)) }
        #expect(try decode(#"{"int": 1e2}"#).int == 100)
        #expect(try decode(#"{"unsigned": 18446744073709551615}"#).unsigned == .max)
        #expect(try decode(#"{"double": 0.1}"#).double == 0.1)
        #expect(try decode(#"{"double": 20000000000000000000}"#).double == 2e19)
        #expect(try decode(#"{"decimal": 0.10000000000000000001}"#).decimal == Decimal(string: "0.10000000000000000001"))
        for refused in [#"{"int": 1.5}"#, #"{"int": 12345678901234567890}"#, #"{"double": 12345678901234567890}"#, #"{"double": 9007199254740993}"#, #"{"int": "1"}"#] {
            #expect(throws: DecodingError.self, "\(refused)") { try decode(refused) }
        }
    }

    @Test("WireJSON decodes the API's types as JSONDecoder does, dates included")
    func apiTypes() throws {
        let draft = Draft(
            id: UUID(), account: "a", thread: "t", replyTo: nil, text: "x", contentWarning: nil, visibility: .direct,
            language: "en", sensitive: true, poll: Draft.Poll(options: ["a", "b"], expiresIn: 60, multiple: false),
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.123), updatedAt: Date(timeIntervalSince1970: 1_700_000_001))
        let data = try WireJSON.encoder().encode(draft)
        #expect(try WireJSON.decode(Draft.self, from: data) == (try WireJSON.decoder().decode(Draft.self, from: data)))
        let dump = PrefsDump(
            scope: .root, schemas: ["n": PreferenceSchema(type: .int, defaultValue: 3, minimum: 0, maximum: 9)],
            values: [.init(key: "n", scope: "/a", value: .decimal(Decimal(string: "12345678901234567890")!))], locks: [.init(key: "n", scope: "/")])
        #expect(try WireJSON.decode(PrefsDump.self, from: try WireJSON.encoder().encode(dump)) == dump)
        let missing = #expect(throws: DecodingError.self) { try WireJSON.decode(PreferenceBatch.self, from: Data("{}".utf8)) }
        #expect(missing?.readableReason.contains("operations") == true)
    }

    @Test("Schema limits compare numbers exactly, not as doubles")
    func schemaLimits() throws {
        let int = PreferenceSchema(type: .int, minimum: -9_007_199_254_740_992, maximum: 1e19)
        for (text, fits) in [
            ("10000000000000000000", true), ("10000000000000000001", false), ("9999999999999999999", true),
            ("-9007199254740992", true), ("-9007199254740993", false), ("12345678901234567890.5", false),
        ] {
            let value = try JSONValue(parsing: text)
            if fits {
                #expect(throws: Never.self, "\(text)") { try int.validate(value, for: "k") }
            } else {
                #expect(throws: PrefsError.self, "\(text)") { try int.validate(value, for: "k") }
            }
        }
        let double = PreferenceSchema(type: .double, minimum: 0.1, maximum: 0.5)
        #expect(throws: PrefsError.self) { try double.validate(try JSONValue(parsing: "0.09999999999999999999"), for: "k") }
        #expect(throws: Never.self) { try double.validate(try JSONValue(parsing: "0.10000000000000000001"), for: "k") }
        #expect(throws: PrefsError.self) { try double.validate(try JSONValue(parsing: "0.50000000000000000001"), for: "k") }
    }
}
