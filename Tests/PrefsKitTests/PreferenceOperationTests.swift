import Foundation
import PrefsKit
import Testing

@Suite("Batch operations")
struct PreferenceOperationTests {
    @Test("Decodes the wire form; scope defaults to the root")
    func decodes() throws {
        let batch = try JSONDecoder().decode(
            PreferenceBatch.self,
            from: Data(
                #"{"operations": [{"op": "set", "key": "a.b", "value": {"x": 1}}, {"op": "reset", "key": "c", "scope": "/u", "recursive": true}]}"#
                    .utf8))
        #expect(batch.operations == [.set("a.b", ["x": 1]), .reset("c", scope: "/u", recursive: true)])
        #expect(batch.operations[0].scope == .root)
    }

    @Test("A null value is a value, to be refused as PUT refuses it; no value is none")
    func nullValue() throws {
        for decode in [
            { try JSONDecoder().decode(PreferenceOperation.self, from: Data($0.utf8)) },
            { try WireJSON.decode(PreferenceOperation.self, from: Data($0.utf8)) },
        ] as [(String) throws -> PreferenceOperation] {
            #expect(try decode(#"{"op": "set", "key": "a", "value": null}"#).value == .null)
            #expect(try decode(#"{"op": "set", "key": "a"}"#).value == nil)
        }
    }

    @Test("Unknown ops and bad scopes are refused")
    func refused() {
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(PreferenceOperation.self, from: Data(#"{"op": "delete", "key": "a"}"#.utf8))
        }
        #expect(throws: PrefsError.self) {
            try JSONDecoder().decode(PreferenceOperation.self, from: Data(#"{"op": "set", "key": "a", "scope": "x", "value": 1}"#.utf8))
        }
    }

    @Test("Unknown fields are refused, in an operation and in the batch: a misspelt field never passes")
    func unknownFieldsRefused() {
        #expect(throws: PrefsError(.invalidRequest, "Unknown field 'recursve' in a batch operation; the fields are op, key, scope, value, recursive.")) {
            try JSONDecoder().decode(PreferenceOperation.self, from: Data(#"{"op": "reset", "key": "a", "recursve": true}"#.utf8))
        }
        #expect(throws: PrefsError.self) {
            try JSONDecoder().decode(PreferenceBatch.self, from: Data(#"{"operations": [], "x-unknown": 42}"#.utf8))
        }
    }

    @Test(
        "A write's answer is written exactly as WireJSON encodes it",
        arguments: [
            WriteResult(revision: 42), WriteResult(revision: 0), WriteResult(revision: 7, removed: 3),
            WriteResult(revision: 9, revisions: [8, 9]), WriteResult(revision: 5, revisions: []),
            WriteResult(revision: Int64.max, revisions: [1], removed: 0),
        ])
    func writeResultWireJSON(result: WriteResult) throws {
        let encoded = String(decoding: try WireJSON.encoder().encode(result), as: UTF8.self)
        #expect(result.wireJSON == encoded)
    }

    @Test("Factory methods")
    func factories() {
        let set = PreferenceOperation.set("k", 1, scope: "/a")
        #expect(set.op == .set)
        #expect(set.value == 1)
        #expect(set.scope == "/a")
        #expect(PreferenceOperation.reset("k").recursive == nil)
        #expect(PreferenceOperation.reset("k", recursive: true).recursive == true)
        #expect(PreferenceOperation.reset("k").value == nil)
    }

    @Test("Encode then decode gives the same batch")
    func roundTrip() throws {
        let batch = PreferenceBatch(operations: [.set("a", [1, 2], scope: "/x"), .reset("b", scope: "/y", recursive: true), .reset("c")])
        let data = try JSONEncoder().encode(batch)
        #expect(try JSONDecoder().decode(PreferenceBatch.self, from: data) == batch)
    }
}
