import Foundation
import HTTPTypes
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// The console's sign-in codes and sessions, on a clock the tests move, and its files.
@Suite struct ConsoleSessionsTests {
    @Test func aCodeWorksOnceAndOnlyWithinItsLifetime() throws {
        let sessions = ConsoleSessions()
        let start = ContinuousClock.now
        let used = sessions.makeCode(for: .owner, role: .admin, scope: .root, now: start).code
        #expect(sessions.signIn(code: used, now: start + .seconds(119)) != nil)
        #expect(sessions.signIn(code: used, now: start + .seconds(119)) == nil, "a code works once")
        let late = sessions.makeCode(for: .owner, role: .admin, scope: .root, now: start).code
        #expect(sessions.signIn(code: late, now: start + ConsoleSessions.codeLifetime) == nil, "expired")
        #expect(sessions.signIn(code: "made-up", now: start) == nil)
    }

    @Test func aSessionLastsItsLifetimeOrUntilItSignsOut() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let sessions = ConsoleSessions()
            let start = ContinuousClock.now
            let (secret, _) = sessions.signIn(.fileToken, now: start)
            let credentials = Array(secret.utf8)
            #expect(ConsoleSessions.isSessionSecret(credentials))
            #expect(sessions.caller(forSecret: credentials, engine: store, now: start + .seconds(3600))?.identity == .fileToken)
            #expect(sessions.caller(forSecret: credentials, engine: store, now: start + ConsoleSessions.sessionLifetime) == nil)
            let (other, _) = sessions.signIn(.fileToken, now: start)
            sessions.signOut(secret: Array(other.utf8))
            #expect(sessions.caller(forSecret: Array(other.utf8), engine: store, now: start) == nil)
        }
    }

    @Test func aSessionIsNarrowedToItsLinkAndEndsWithItsToken() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let sessions = ConsoleSessions()
            let created = try await store.createToken(named: "ops", role: .admin, scope: "/accounts")
            let grant = try #require(store.grant(forSecret: Array(created.secret.utf8)))
            let token = Caller(identity: .namedToken(name: "ops", secret: Array(created.secret.utf8)), grant: grant)
            let code = sessions.makeCode(for: token, role: .reader, scope: "/accounts/alice").code
            let secret = Array(try #require(sessions.signIn(code: code)).secret.utf8)
            let caller = try #require(sessions.caller(forSecret: secret, engine: store))
            #expect(caller.grant.role == .reader && caller.grant.scope == "/accounts/alice" && caller.tokenName == "ops")
            try await store.revokeToken(named: "ops")
            #expect(sessions.caller(forSecret: secret, engine: store) == nil, "revoked with its token")
        }
    }

    @Test func theFilesAreServedWithTheirTypeTagAndSecurityHeaders() throws {
        let files = ConsoleFiles([("index.html", "<!doctype html>"), ("app.js", "export {}"), ("console.css", "a{}")])
        let page = try files.answer("index.html", ifNoneMatch: nil)
        let fields = Dictionary(page.fields.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(fields["content-type"] == "text/html; charset=utf-8")
        #expect(fields["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(fields["x-frame-options"] == "DENY")
        let tag = try #require(fields["etag"])
        #expect(try files.answer("index.html", ifNoneMatch: "\"other\", \(tag)").status == .notModified)
        #expect(try files.answer("app.js", ifNoneMatch: tag).status == .ok, "each file has its own tag")
        #expect(try files.answer("app.js", ifNoneMatch: nil).fields.first?.value == "text/javascript; charset=utf-8")
        #expect(throws: PrefsError.self) { try files.answer("../Package.swift", ifNoneMatch: nil) }
    }

    @Test func aFolderOfFilesServesAsTheConsoleOnlyWithItsPage() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "console-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "export {}".write(to: folder.appending(path: "app.js"), atomically: true, encoding: .utf8)
        try "secret".write(to: folder.appending(path: "notes.txt"), atomically: true, encoding: .utf8)
        #expect(throws: PrefsError.self) { try ConsoleFiles(folder: folder.path) }
        try "<!doctype html>".write(to: folder.appending(path: "index.html"), atomically: true, encoding: .utf8)
        let files = try ConsoleFiles(folder: folder.path)
        #expect(Set(files.files.keys) == ["index.html", "app.js"], "only the console's kinds of file")
        #expect(throws: PrefsError.self) { try ConsoleFiles(folder: folder.appending(path: "missing").path) }
    }
}
