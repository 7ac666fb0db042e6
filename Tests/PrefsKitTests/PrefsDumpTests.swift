import Foundation
import PrefsKit
import Testing

@Suite("Dumps")
struct PrefsDumpTests {
    private func stored(_ values: [ScopePath: JSONValue], locks: [ScopePath] = [], schema: PreferenceSchema? = nil) -> KeyState {
        KeyState(
            values: values.mapValues { StoredValue(value: $0, revision: 1) },
            locks: Dictionary(uniqueKeysWithValues: locks.map { ($0, Revision(2)) }),
            schema: schema)
    }

    private var keys: [(key: String, state: KeyState)] {
        [
            ("zeta.last", stored(["/b": 2, "/a": 1, "/": 0])),
            ("alpha.first", stored(["/accounts/alice": "x", "/": "root"], locks: ["/accounts", "/"])),
            ("mid.schema", stored([:], schema: PreferenceSchema(type: .int, defaultValue: 3))),
        ]
    }

    @Test("Values and locks are sorted by key, then scope")
    func sorted() {
        let dump = PrefsDump(subtree: .root, keys: keys)
        #expect(dump.format == 1)
        #expect(dump.scope == .root)
        #expect(
            dump.values.map { "\($0.key) \($0.scope)" } == [
                "alpha.first /", "alpha.first /accounts/alice", "zeta.last /", "zeta.last /a", "zeta.last /b",
            ])
        #expect(dump.locks == [PrefsDump.Lock(key: "alpha.first", scope: "/"), PrefsDump.Lock(key: "alpha.first", scope: "/accounts")])
        #expect(dump.schemas == ["mid.schema": PreferenceSchema(type: .int, defaultValue: 3)])
    }

    @Test("The order of the input does not matter")
    func stable() {
        #expect(PrefsDump(subtree: .root, keys: keys) == PrefsDump(subtree: .root, keys: keys.reversed()))
        let dump = PrefsDump(
            scope: .root, schemas: [:],
            values: [.init(key: "b", scope: "/", value: 1), .init(key: "a", scope: "/z", value: 2), .init(key: "a", scope: "/", value: 3)],
            locks: [])
        #expect(dump.values.map(\.value) == [3, 2, 1])
    }

    @Test("A subtree dump keeps only values and locks inside it, and every schema")
    func subtree() {
        let dump = PrefsDump(subtree: "/accounts", keys: keys)
        #expect(dump.scope == "/accounts")
        #expect(dump.values == [PrefsDump.Value(key: "alpha.first", scope: "/accounts/alice", value: "x")])
        #expect(dump.locks == [PrefsDump.Lock(key: "alpha.first", scope: "/accounts")])
        #expect(dump.schemas.keys.sorted() == ["mid.schema"])
    }

    @Test("Codable round trip, byte for byte stable")
    func roundTrip() throws {
        let dump = PrefsDump(subtree: .root, keys: keys)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(dump)
        let decoded = try JSONDecoder().decode(PrefsDump.self, from: data)
        #expect(decoded == dump)
        #expect(try encoder.encode(decoded) == data)
    }

    @Test("Missing arrays and scope decode as empty and root")
    func minimal() throws {
        let dump = try JSONDecoder().decode(PrefsDump.self, from: Data(#"{"format": 1}"#.utf8))
        #expect(dump.scope == .root)
        #expect(dump.values.isEmpty)
        #expect(dump.locks.isEmpty)
        #expect(dump.schemas.isEmpty)
    }

    @Test("A wrong format is refused with invalid_request", arguments: [0, 2, 99])
    func wrongFormat(format: Int) {
        let error = #expect(throws: PrefsError.self) {
            try JSONDecoder().decode(PrefsDump.self, from: Data(#"{"format": \#(format), "values": []}"#.utf8))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("format \(format)") == true)
    }

    @Test("A dump without a format does not decode")
    func noFormat() {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(PrefsDump.self, from: Data(#"{"values": []}"#.utf8)) }
    }

    @Test("Bad entries inside a dump are refused while decoding")
    func badEntries() {
        let badScope = #expect(throws: PrefsError.self) {
            try JSONDecoder().decode(
                PrefsDump.self, from: Data(#"{"format": 1, "values": [{"key": "a", "scope": "nope", "value": 1}]}"#.utf8))
        }
        #expect(badScope?.code == .invalidScope)
        let badSchema = #expect(throws: PrefsError.self) {
            try JSONDecoder().decode(PrefsDump.self, from: Data(#"{"format": 1, "schemas": {"a": {"type": "nope"}}}"#.utf8))
        }
        #expect(badSchema?.code == .invalidSchema)
    }
}
