import Foundation
import PrefsKit
import Testing

@Suite("Preference sources on the wire")
struct PreferenceSourceTests {
    @Test("Each source has its wire string, and parses back")
    func wireStrings() throws {
        let cases: [(PreferenceSource, String)] = [
            (.override, "override"),
            (.lock("/p"), "lock:/p"),
            (.lock(.root), "lock:/"),
            (.scope("/p"), "scope:/p"),
            (.scope("/accounts/alice"), "scope:/accounts/alice"),
            (.default, "default"),
            (.none, "none"),
            (.local, "local"),
        ]
        for (source, text) in cases {
            #expect(source.description == text)
            #expect(try PreferenceSource(text) == source)
        }
    }

    @Test("Unknown or malformed sources are refused", arguments: ["", "scope", "lock:", "scope:p", "lock:/a/", "Override", "x:/a"])
    func refused(text: String) {
        #expect(throws: PrefsError.self) { try PreferenceSource(text) }
    }

    @Test(
        "The directly written answer is byte for byte what the wire encoder writes",
        arguments: [
            JSONValue.integer(3), 1.5, "text with \"quotes\", a / slash and \u{e9}", true, .null, [1, "a", [true]],
            ["b": 1, "a": ["y": 2, "x": [1.25, -3]]], -0.5, 1e300,
        ])
    func compactWireJSON(value: JSONValue) throws {
        for source in [PreferenceSource.scope("/accounts/alice"), .lock(.root), .default, .override, .none] {
            let resolved = ResolvedPreference(
                key: "timeline.font-size_2", scope: "/accounts/alice@x.org/threads/t-1:2", value: value, source: source,
                revision: 42)
            let encoded = String(decoding: try WireJSON.encoder().encode(resolved), as: UTF8.self)
            #expect(resolved.compactWireJSON == encoded)
            // And read back without a decoder, to what a decoder reads.
            #expect(ResolvedPreference(compactWireJSON: Data(encoded.utf8)) == resolved)
            #expect(try JSONDecoder().decode(ResolvedPreference.self, from: Data(encoded.utf8)) == resolved)
        }
        let explained = ResolvedPreference(key: "k", scope: .root, value: 1, source: .default, revision: 1, chain: [])
        #expect(explained.compactWireJSON == nil)
    }

    @Test("Any text but the compact form is left to a decoder", arguments: [
        #"{"key":"k","revision":1,"scope":"/","source":"default","value":1,"chain":[]}"#,  // explained
        #"{"key": "k","revision":1,"scope":"/","source":"default","value":1}"#,  // other spacing
        #"{"revision":1,"key":"k","scope":"/","source":"default","value":1}"#,  // other order
        #"{"key":"k","revision":-1,"scope":"/","source":"default","value":1}"#,
        #"{"key":"k","revision":1,"scope":"no-slash","source":"default","value":1}"#,
        #"{"key":"k","revision":1,"scope":"/","source":"elsewhere","value":1}"#,
        #"{"key":"k","revision":1,"scope":"/","source":"default","value":[1,}"#,
        #"{"key":"k","revision":1,"scope":"/","source":"default","value":1"#,
        "",
    ])
    func compactWireJSONRefusesOthers(text: String) {
        #expect(ResolvedPreference(compactWireJSON: Data(text.utf8)) == nil)
    }

    @Test("A resolved preference encodes its source as the wire string")
    func resolvedJSON() throws {
        let resolved = ResolvedPreference(
            key: "k", scope: "/a/b", value: 3, source: .scope("/a"), revision: 7,
            chain: [ChainLayer(layer: .scope("/a/b"), value: nil, revision: nil), ChainLayer(layer: .scope("/a"), value: 3, revision: 7)])
        let data = try JSONEncoder().encode(resolved)
        let json = try JSONValue(parsing: data)
        guard case .object(let object) = json else {
            Issue.record("not an object: \(json)")
            return
        }
        #expect(object["source"] == "scope:/a")
        #expect(object["scope"] == "/a/b")
        #expect(object["value"] == 3)
        #expect(object["revision"] == 7)
        #expect(object["chain"] == [["layer": "scope:/a/b"], ["layer": "scope:/a", "value": 3, "revision": 7]])
        #expect(try JSONDecoder().decode(ResolvedPreference.self, from: data) == resolved)
    }
}
