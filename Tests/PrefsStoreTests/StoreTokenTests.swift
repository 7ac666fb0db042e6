import Foundation
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

/// Named tokens in a store of its own: found by their secrets in memory, listed with when they
/// were last used, revoked, and kept across a reopening.
@Suite("Store: named tokens")
struct StoreTokenTests {
    @Test("A token's secret finds its grant until it is revoked; its name is taken until then")
    func createAndRevoke() async throws {
        try await withStore(makeStore()) { store in
            let created = try await store.createToken(named: "ci", role: .writer, scope: "/ci")
            #expect(created.token.role == .writer && created.token.scope == "/ci" && created.revision == 1)
            #expect(store.grant(forSecret: Array(created.secret.utf8)) == AccessGrant(token: "ci", role: .writer, scope: "/ci"))
            #expect(store.grant(forSecret: Array((created.secret + "x").utf8)) == nil)
            #expect(store.grant(forSecret: Array(created.secret.dropLast().utf8)) == nil)
            await #expect(throws: PrefsError.self) { try await store.createToken(named: "ci", role: .reader, scope: .root) }
            let revoked = try await store.revokeToken(named: "ci")
            #expect(revoked.revision == 2)
            #expect(store.grant(forSecret: Array(created.secret.utf8)) == nil)
            do {
                try await store.revokeToken(named: "ci")
                Issue.record("a token revoked twice")
            } catch let error as PrefsError {
                #expect(error.code == .notFound)
            }
            let again = try await store.createToken(named: "ci", role: .reader, scope: .root)
            #expect(again.secret != created.secret)
            #expect(try await store.changes(ChangeQuery(order: .oldestFirst)).changes.map(\.kind) == [.tokenCreated, .tokenRevoked, .tokenCreated])
        }
    }

    @Test("When a token was last used is written now and then, and listed")
    func lastUsed() async throws {
        try await withStore(makeStore { $0.tokenUseInterval = .milliseconds(20) }) { store in
            let created = try await store.createToken(named: "reader", role: .reader, scope: .root)
            #expect(try await store.tokens().map(\.lastUsed) == [nil])
            // The second of the use as the engine reads it: `time`, the kernel's coarse clock,
            // which can still read the second before one `Date()` has just entered.
            let before = Date(timeIntervalSince1970: Double(time(nil)))
            #expect(store.grant(forSecret: Array(created.secret.utf8)) != nil)
            try await waitUntil("the use is written") {
                // `tokens()` adds uses not written yet: read the storage's own rows.
                try await store.storage.tokens().first?.lastUsedAt != nil
            }
            #expect(try await store.tokens().first?.lastUsed ?? .distantPast >= before)
        }
    }

    @Test("Tokens are kept across a reopening; only a hash of each secret is in the file")
    func kept() async throws {
        let folder = try makeFolder()
        defer { removeFolder(folder) }
        let path = folder.appending(path: "p.sqlite").path
        let secret = try await withStore(try EmbeddedStore(path: path, configuration: .forTests())) { store throws in
            try await store.createToken(named: "kept", role: .admin, scope: "/a").secret
        }
        try await withStore(try EmbeddedStore(path: path, configuration: .forTests())) { store throws in
            #expect(store.grant(forSecret: Array(secret.utf8)) == AccessGrant(token: "kept", role: .admin, scope: "/a"))
            #expect(try await store.tokens().map(\.name) == ["kept"])
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.range(of: Data(secret.utf8)) == nil)
    }
}
