import PrefsEngine
import PrefsKit
import Testing

/// Named tokens as the engine keeps them: created and revoked as changes, their secrets checked
/// from memory, each grant bounded by its token's role and scope.
@Suite("Engine: named tokens")
struct EngineTokenTests {
    @Test("A token's secret grants its role at its scope and below, and nothing more")
    func grantBounds() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let created = try await engine.createToken(named: "alice-app", role: .writer, scope: "/accounts/alice")
            #expect(created.token.role == .writer)
            #expect(created.token.scope == "/accounts/alice")
            let grant = try #require(engine.grant(forSecret: Array(created.secret.utf8)))
            #expect(grant == AccessGrant(token: "alice-app", role: .writer, scope: "/accounts/alice"))
            #expect(grant.permits(.reader, at: "/accounts/alice/threads/1"))
            #expect(grant.permits(.writer, at: "/accounts/alice"))
            #expect(!grant.permits(.admin, at: "/accounts/alice"), "above its role")
            #expect(!grant.permits(.reader, at: "/accounts/bob"), "beside its scope")
            #expect(!grant.permits(.reader, at: .root), "above its scope")
            #expect(engine.grant(forSecret: Array((created.secret + "x").utf8)) == nil)
            #expect(try await engine.tokens().map(\.name) == ["alice-app"])
        }
    }

    @Test("A name is taken once, and a name out of the rules is refused, each changing nothing")
    func refusedCreations() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let first = try await engine.createToken(named: "ci", role: .reader, scope: .root)
            let taken = await #expect(throws: PrefsError.self) {
                try await engine.createToken(named: "ci", role: .admin, scope: .root)
            }
            #expect(taken?.code == .conflict)
            let misnamed = await #expect(throws: PrefsError.self) {
                try await engine.createToken(named: "-ci", role: .reader, scope: .root)
            }
            #expect(misnamed?.code == .invalidRequest)
            #expect(try await engine.status().revision == first.revision)
            #expect(try await engine.tokens().map(\.role) == [.reader])
        }
    }

    @Test("A revoked token's secret grants nothing; its name is free again, for a new secret")
    func revoke() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            let first = try await engine.createToken(named: "ci", role: .reader, scope: .root)
            let revoked = try await engine.revokeToken(named: "ci")
            #expect(revoked.revision == first.revision + 1)
            #expect(engine.grant(forSecret: Array(first.secret.utf8)) == nil)
            #expect(try await engine.tokens().isEmpty)
            let again = await #expect(throws: PrefsError.self) { try await engine.revokeToken(named: "ci") }
            #expect(again?.code == .notFound)

            let second = try await engine.createToken(named: "ci", role: .admin, scope: .root)
            #expect(second.secret != first.secret)
            #expect(engine.grant(forSecret: Array(first.secret.utf8)) == nil)
            #expect(engine.grant(forSecret: Array(second.secret.utf8))?.role == .admin)
        }
    }

    @Test("The audit log shows tokens created and revoked, without what would find their secret")
    func auditLog() async throws {
        try await withEngine(on: SharedMemoryStorage()) { engine in
            _ = try await engine.createToken(named: "ci", role: .reader, scope: "/accounts")
            try await engine.revokeToken(named: "ci")
            let log = try await engine.changes(ChangeQuery(order: .oldestFirst)).changes
            #expect(log.map(\.kind) == [.tokenCreated, .tokenRevoked])
            #expect(log.map(\.scope) == ["/accounts", "/accounts"])
            guard case .object(let created)? = log.first?.value else {
                Issue.record("the creation's value is not an object: \(String(describing: log.first?.value))")
                return
            }
            #expect(created["name"] == "ci")
            #expect(created["sha256"] == nil)
        }
    }
}
