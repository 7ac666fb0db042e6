import Foundation
import PrefsKit
import Testing

/// OFREP's side of the domain: how a context becomes a scope, and how a key's state reads as a
/// flag.
@Suite("Flags: scope templates and evaluations")
struct FlagEvaluationTests {
    static let template = try! ScopeTemplate("/tenants/{tenant}/users/{targetingKey}")

    @Test("A context reads at the deepest scope the template builds from what it has")
    func scopes() throws {
        for (context, scope) in [
            ([:], "/"), (["tenant": "acme"], "/tenants/acme"), (["tenant": "acme", "targetingKey": "bob"], "/tenants/acme/users/bob"),
            (["targetingKey": "bob"], "/"), (["tenant": .integer(42)], "/tenants/42"),
        ] as [([String: JSONValue], String)] {
            #expect(try Self.template.scope(for: context) == ScopePath(scope), "\(context)")
        }
        let trailing = try ScopeTemplate("/tenants/{tenant}/app")
        #expect(try trailing.scope(for: ["tenant": "acme"]) == "/tenants/acme/app")
        #expect(try trailing.scope(for: [:]) == "/")
        let named = try ScopeTemplate("/tenants/{tenant}/{scope}")
        #expect(try named.scope(for: ["tenant": "acme", "scope": "/users/bob"]) == "/tenants/acme/users/bob")
        #expect(try ScopeTemplate.contextScope.scope(for: ["scope": "/accounts/alice"]) == "/accounts/alice")
        #expect(try ScopeTemplate.contextScope.scope(for: [:]) == "/")
    }

    @Test("An attribute that cannot be a segment is the caller's mistake; a bad template is refused")
    func refusals() {
        for context in [["tenant": "a/b"], ["tenant": "a b"], ["tenant": ""], ["tenant": .bool(true)], ["tenant": .object([:])]] as [[String: JSONValue]] {
            #expect(throws: PrefsError.self, "\(context)") { try Self.template.scope(for: context) }
        }
        #expect(throws: PrefsError.self) { try ScopeTemplate.contextScope.scope(for: ["scope": "not a path"]) }
        for bad in ["tenants/{tenant}", "/tenants/{tenant}x", "/{scope}/x", "/{a b}", "/a b"] {
            #expect(throws: PrefsError.self, "\(bad)") { try ScopeTemplate(bad) }
        }
    }

    @Test("Reasons, variants and revisions follow the layer that won")
    func evaluations() throws {
        var state = KeyState(values: ["/": StoredValue(value: "all", revision: 3), "/tenants/acme": StoredValue(value: "acme", revision: 5)])
        state.schema = PreferenceSchema(type: .string, defaultValue: "default")
        let acme = try #require(FlagEvaluation(key: "k", at: "/tenants/acme/users/bob", state: state, override: nil))
        #expect((acme.value, acme.reason, acme.variant, acme.revision) == ("acme", "TARGETING_MATCH", "scope:/tenants/acme", 5))
        let globex = try #require(FlagEvaluation(key: "k", at: "/tenants/globex", state: state, override: nil))
        #expect((globex.value, globex.reason, globex.variant, globex.revision) == ("all", "STATIC", "scope:/", 3))
        let overridden = try #require(FlagEvaluation(key: "k", at: "/tenants/acme", state: state, override: "forced"))
        #expect((overridden.reason, overridden.variant, overridden.revision) == ("STATIC", "override", nil))
        state.locks["/tenants"] = 7
        let locked = try #require(FlagEvaluation(key: "k", at: "/tenants/acme", state: state, override: nil))
        #expect((locked.value, locked.reason, locked.variant, locked.revision) == ("all", "STATIC", "lock:/tenants", 7))
        #expect(locked.json.contains(#""locked":true"#))
        state.values = [:]
        state.locks = [:]
        let defaulted = try #require(FlagEvaluation(key: "k", at: "/tenants/acme", state: state, override: nil))
        #expect((defaulted.value, defaulted.reason, defaulted.variant, defaulted.revision) == ("default", "DEFAULT", "default", nil))
        #expect(defaulted.json == #"{"key":"k","metadata":{"scope":"/tenants/acme","source":"default"},"reason":"DEFAULT","value":"default","variant":"default"}"#)
        #expect(FlagEvaluation(key: "k", at: "/", state: KeyState(), override: nil) == nil, "no value, no default: not found")
    }
}
