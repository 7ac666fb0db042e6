import Foundation
import PrefsKit
import Testing

@Suite("Scope paths")
struct ScopePathTests {
    @Test(
        "Valid paths are accepted as written",
        arguments: ["/", "/accounts", "/accounts/alice", "/accounts/alice/threads/42", "/a/b.c", "/user@host:1+x", "/A-Z_09"]
    )
    func valid(path: String) throws {
        let scope = try ScopePath(path)
        #expect(scope.path == path)
        #expect(scope.description == path)
    }

    @Test(
        "Invalid paths are refused with invalid_scope",
        arguments: ["", "accounts", "accounts/alice", "/accounts/", "//", "/a//b", "/a/./b", "/a/..", "/.", "/a b", "/a/b?c", "/é"]
    )
    func invalid(path: String) {
        let error = #expect(throws: PrefsError.self) { try ScopePath(path) }
        #expect(error?.code == .invalidScope)
    }

    @Test("At most 1024 bytes")
    func lengthLimit() throws {
        let longest = "/" + String(repeating: "a", count: 1023)
        let scope = try ScopePath(longest)
        #expect(scope.path == longest)
        let error = #expect(throws: PrefsError.self) { try ScopePath(longest + "a") }
        #expect(error?.code == .invalidScope)
    }

    @Test("The root")
    func root() throws {
        #expect(ScopePath.root.path == "/")
        #expect(ScopePath.root.isRoot)
        let slash = "/"
        let parsed = try ScopePath(slash)
        #expect(parsed == .root)
        #expect(ScopePath.root.parent == nil)
        let nested: ScopePath = "/a"
        #expect(!nested.isRoot)
    }

    @Test("parent removes the last segment")
    func parent() {
        let cases: [(ScopePath, ScopePath)] = [
            ("/a", .root),
            ("/a/b", "/a"),
            ("/accounts/alice/threads/42", "/accounts/alice/threads"),
            // A dot inside a segment is not a separator.
            ("/a/b.c", "/a"),
        ]
        for (scope, parent) in cases {
            #expect(scope.parent == parent)
        }
    }

    @Test("selfAndAncestors goes from the scope up to the root")
    func selfAndAncestors() {
        #expect(ScopePath.root.selfAndAncestors == [.root])
        let one: ScopePath = "/a"
        #expect(one.selfAndAncestors == ["/a", .root])
        let deep: ScopePath = "/accounts/alice/threads/42"
        #expect(
            deep.selfAndAncestors == [
                "/accounts/alice/threads/42", "/accounts/alice/threads", "/accounts/alice", "/accounts", .root,
            ])
    }

    @Test("contains: itself and what lies below, not siblings sharing a prefix")
    func contains() {
        let alice: ScopePath = "/accounts/alice"
        #expect(ScopePath.root.contains(.root))
        #expect(ScopePath.root.contains(alice))
        #expect(alice.contains(alice))
        #expect(alice.contains("/accounts/alice/threads/42"))
        #expect(!alice.contains("/accounts/alicex"))
        #expect(!alice.contains("/accounts/alice-b/x"))
        #expect(!alice.contains("/accounts"))
        #expect(!alice.contains(.root))
        #expect(!alice.contains("/accounts/bob"))
    }

    @Test("appending adds one validated segment")
    func appending() throws {
        let a = try ScopePath.root.appending("a")
        #expect(a == "/a")
        let ab = try a.appending("b")
        #expect(ab == "/a/b")
        #expect(throws: PrefsError.self) { try a.appending("..") }
        #expect(throws: PrefsError.self) { try a.appending("b/c/") }
        #expect(throws: PrefsError.self) { try a.appending("") }
    }

    @Test("Codable as a plain string, validated on decode")
    func codable() throws {
        let scopes: [ScopePath] = ["/a/b"]
        let data = try JSONEncoder().encode(scopes)
        #expect(try JSONValue(parsing: data) == ["/a/b"])
        let decoded = try JSONDecoder().decode([ScopePath].self, from: data)
        #expect(decoded == scopes)
        let error = #expect(throws: PrefsError.self) {
            try JSONDecoder().decode([ScopePath].self, from: Data(#"["/a/../b"]"#.utf8))
        }
        #expect(error?.code == .invalidScope)
    }

    @Test("Ordered by path text")
    func ordering() throws {
        let scopes: [ScopePath] = ["/b", .root, "/a/b", "/a"]
        #expect(scopes.sorted().map(\.path) == ["/", "/a", "/a/b", "/b"])
    }

    @Test("A string literal makes a scope")
    func literal() {
        let scope: ScopePath = "/accounts/alice"
        #expect(scope.path == "/accounts/alice")
    }
}
