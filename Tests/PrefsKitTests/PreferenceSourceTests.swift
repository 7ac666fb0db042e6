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
