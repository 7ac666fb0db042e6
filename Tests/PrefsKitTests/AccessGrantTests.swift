import Foundation
import PrefsKit
import Testing

/// What a role at a scope may do, what a scoped caller sees of an explanation, and which names
/// and token bodies are accepted.
@Suite("Access: roles, scopes and token names")
struct AccessGrantTests {
    static let writer = AccessGrant(token: "ci", role: .writer, scope: "/tenants/acme")

    @Test("A role permits itself and the roles below it, at its scope and below")
    func permits() throws {
        #expect(AccessRole.reader < .writer && AccessRole.writer < .admin)
        for (role, scope, permitted) in [
            (AccessRole.reader, "/tenants/acme", true), (.writer, "/tenants/acme/x/y", true), (.admin, "/tenants/acme", false),
            (.reader, "/tenants", false), (.reader, "/", false), (.writer, "/tenants/acme2", false), (.reader, "/tenants/other", false),
        ] {
            #expect(Self.writer.permits(role, at: try ScopePath(scope)) == permitted, "\(role) at \(scope)")
        }
        #expect(AccessGrant.everything.permits(.admin, at: "/anything/at/all"))
        #expect(Self.writer.covers(account: "alice") == false)
        #expect(AccessGrant(role: .reader, scope: "/accounts/alice").covers(account: "alice"))
        #expect(AccessGrant(role: .reader, scope: "/accounts/alice").covers(account: "alicia") == false)
        #expect(AccessGrant(role: .reader, scope: "/accounts").covers(account: "bob"))
    }

    @Test("A refusal says who is what where, and what the request needs; it is 403 forbidden")
    func refusal() {
        do {
            try Self.writer.check(.admin, at: "/tenants/acme", for: "PUT /v1/locks/k")
            Issue.record("a writer locked")
        } catch let error as PrefsError {
            #expect(error.code == .forbidden)
            #expect(error.message == "Token 'ci' is a writer at /tenants/acme; PUT /v1/locks/k needs an admin at /tenants/acme or above it. Nothing was changed.")
        } catch {
            Issue.record("\(error)")
        }
        #expect(throws: PrefsError.self) { try Self.writer.check(.reader, account: "alice", for: "GET /v1/drafts") }
    }

    @Test("An explanation shows a scoped caller the layers above its scope without their values")
    func redacting() {
        let chain = [
            ChainLayer(layer: .scope("/tenants/acme/x"), value: nil, revision: nil),
            ChainLayer(layer: .scope("/tenants/acme"), value: "mine", revision: 3),
            ChainLayer(layer: .lock("/tenants"), value: "locked", revision: 2),
            ChainLayer(layer: .scope("/"), value: "everyone's", revision: 1),
            ChainLayer(layer: .default, value: "default", revision: nil),
        ]
        let resolved = ResolvedPreference(
            key: "k", scope: "/tenants/acme/x", value: "locked", source: .lock("/tenants"), revision: 3, chain: chain)
        let redacted = Self.writer.redacting(resolved)
        #expect(redacted.value == "locked" && redacted.source == .lock("/tenants"), "the value and its source stay")
        #expect(redacted.chain?.map(\.value) == [nil, "mine", nil, nil, "default"])
        #expect(redacted.chain?.map(\.revision) == [nil, 3, nil, nil, nil])
        #expect(AccessGrant.everything.redacting(resolved) == resolved)
    }

    @Test("Token names: letters, digits, '.', '_' and '-', up to 64, not the file token's")
    func names() {
        for good in ["ci", "deploy-bot.eu_1", "A", String(repeating: "x", count: 64)] {
            #expect(throws: Never.self) { try AccessToken.checkName(good) }
        }
        for bad in ["", "default", "-x", ".x", "_x", "a b", "a/b", "é", String(repeating: "x", count: 65)] {
            #expect(throws: PrefsError.self, "\(bad)") { try AccessToken.checkName(bad) }
        }
        #expect(AccessToken.authorName(of: "ci") == "token:ci")
    }

    @Test("A token's body: name and role required, scope / by default, nothing else")
    func tokenRequests() throws {
        let decoder = JSONDecoder()
        let made = try decoder.decode(TokenRequest.self, from: Data(#"{"name":"ci","role":"writer"}"#.utf8))
        #expect(made == TokenRequest(name: "ci", role: .writer, scope: .root))
        for bad in [
            #"{"name":"ci"}"#, #"{"role":"reader"}"#, #"{"name":"ci","role":"owner"}"#, #"{"name":"a b","role":"reader"}"#,
            #"{"name":"ci","role":"reader","scope":"nope"}"#, #"{"name":"ci","role":"reader","secret":"x"}"#,
            #"{"name":"ci","role":"reader","scope":null}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try decoder.decode(TokenRequest.self, from: Data(bad.utf8)) }
        }
    }
}
