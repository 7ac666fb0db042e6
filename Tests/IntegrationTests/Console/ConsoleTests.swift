import Foundation
import PrefsClient
import PrefsKit
import TestHarness
import Testing

/// The console's side of the daemon, over its TCP listener as a browser reaches it: its files
/// behind a strict Content-Security-Policy, signing in by a `prefsctl ui` link or a token, and
/// what each session may do — enforced by the server, whatever the page shows.
@Suite struct ConsoleTests {
    /// A daemon listening on TCP with the file token `file-t0ken`, its listener answering.
    static func daemon(arguments: [String] = []) async throws -> (Daemon, TCPConnection) {
        let (daemon, port) = try await TCPListenerTests.daemon(token: "file-t0ken", arguments: arguments)
        try await TokenAccessTests.waitForListener(port, token: "file-t0ken")
        return (daemon, try TCPConnection(port: port))
    }

    /// A link's code, from `prefsctl ui` with `arguments`.
    static func code(_ daemon: Daemon, _ arguments: String...) async throws -> String {
        let result = try await daemon.prefsctl(["ui", "--no-open"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let url = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/ui/#signin="), "\(url)")
        return String(url[try #require(url.range(of: "#signin=")).upperBound...])
    }

    /// Signs in with `body` (`{"code": …}` or `{"token": …}`): the session's secret, and the answer.
    static func signIn(_ connection: TCPConnection, _ body: String) async throws -> (secret: String?, answer: [String: Any]) {
        let (status, text) = await connection.request("POST", "/ui/session", token: nil, body: body)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        return (status == 201 ? answer["secret"] as? String : nil, answer)
    }

    @Test func theConsolesFilesNeedNoTokenAndLetTheBrowserRunNothingElse() async throws {
        let (daemon, _) = try await Self.daemon()
        let port = try #require(daemon.arguments.first { $0.hasPrefix("127.0.0.1:") }.flatMap { UInt16($0.dropFirst(10)) })
        /// One request on a connection of its own: its status, body and head.
        func get(_ target: String, token: String? = nil, headers: [(String, String)] = []) async throws -> (Int, String, String) {
            let connection = try TCPConnection(port: port)
            let (status, body) = await connection.request("GET", target, token: token, headers: headers)
            return (status, body, connection.lastHead.lowercased())
        }
        var tag = ""
        for target in ["/ui", "/ui/", "/ui/index.html"] {
            let (status, body, head) = try await get(target)
            #expect(status == 200, "\(target)")
            #expect(body.contains("<script type=\"module\" src=\"/ui/"), "\(target): \(body.prefix(200))")
            #expect(head.contains("content-type: text/html; charset=utf-8"))
            #expect(head.contains("content-security-policy: default-src 'none'; script-src 'self';"))
            #expect(head.contains("frame-ancestors 'none'") && head.contains("x-content-type-options: nosniff"))
            #expect(!body.contains("<script>") && !body.contains("style=\""), "no inline script or style")
            tag = head.split(separator: "\r\n").first { $0.hasPrefix("etag:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        let (revalidated, empty, _) = try await get("/ui/", headers: [("If-None-Match", tag)])
        #expect(revalidated == 304 && empty.isEmpty, "\(tag)")
        let (script, _, scriptHead) = try await get("/ui/app.js")
        #expect(script == 200 && scriptHead.contains("content-type: text/javascript"))
        let (missing, error, _) = try await get("/ui/nothing.js", token: "file-t0ken")
        #expect(missing == 404 && error.contains("not_found"))
        // Everything else still needs a token.
        #expect(try await get("/v1/status").0 == 401)
        #expect(try await get("/ui/session").0 == 401)
    }

    @Test func aLinkSignsInOnceAsTheSocketsOwnerWhoseChangesTheyAre() async throws {
        let (daemon, connection) = try await Self.daemon()
        let code = try await Self.code(daemon)
        let (secret, session) = try await Self.signIn(connection, #"{"code": "\#(code)"}"#)
        let sessionSecret = try #require(secret)
        #expect(sessionSecret.hasPrefix("console_"))
        #expect(session["role"] as? String == "admin" && session["scope"] as? String == "/")
        let (again, refusal) = await connection.request("POST", "/ui/session", token: nil, body: #"{"code": "\#(code)"}"#)
        #expect(again == 401 && refusal.contains("used or expired"), "a code works once")

        let (status, _) = await connection.request(
            "PUT", "/v1/prefs/ui.theme?scope=/accounts/alice", token: sessionSecret, body: #""dark""#,
            headers: [("User-Agent", "console-test")])
        #expect(status == 200)
        let author = try #require(try await daemon.client.history(of: "ui.theme", scope: "/accounts/alice").steps.first?.change.author)
        #expect(author.name == ChangeAuthor.currentProcess.name && author.agent == "console-test", "\(author)")

        let (current, whoami) = await connection.request("GET", "/ui/session", token: sessionSecret)
        #expect(current == 200 && whoami.contains(#""role":"admin""#) && whoami.contains("expiresAt") && !whoami.contains("secret"))
        #expect(await connection.request("DELETE", "/ui/session", token: sessionSecret).status == 204)
        #expect(await connection.request("GET", "/ui/session", token: sessionSecret).status == 401)
        #expect(await connection.request("GET", "/v1/status", token: sessionSecret).status == 401, "signed out")
    }

    @Test func aReadOnlyOrScopedLinkOpensASessionTheServerHoldsToIt() async throws {
        let (daemon, connection) = try await Self.daemon()
        try await daemon.client.set("ui.theme", to: "light", scope: "/accounts/alice")
        let reader = try #require(try await Self.signIn(connection, #"{"code": "\#(try await Self.code(daemon, "--read-only"))"}"#).secret)
        #expect(await connection.request("GET", "/v1/prefs/ui.theme?scope=/accounts/alice", token: reader).status == 200)
        let (refused, message) = await connection.request("PUT", "/v1/prefs/ui.theme?scope=/accounts/alice", token: reader, body: "1")
        #expect(refused == 403 && message.contains("forbidden"))
        let scoped = try #require(
            try await Self.signIn(connection, #"{"code": "\#(try await Self.code(daemon, "--scope", "/accounts/alice"))"}"#).secret)
        #expect(await connection.request("PUT", "/v1/prefs/ui.theme?scope=/accounts/alice", token: scoped, body: #""dark""#).status == 200)
        #expect(await connection.request("PUT", "/v1/prefs/ui.theme?scope=/accounts/bob", token: scoped, body: #""dark""#).status == 403)
        #expect(try await daemon.client.resolve("ui.theme", scope: "/accounts/alice").value == "dark")
        #expect(try await daemon.client.status().counts.values == 1, "the refused writes changed nothing")
        // A session cannot make a link beyond itself.
        let (beyond, _) = await connection.request("POST", "/v1/ui/links", token: reader, body: #"{"role": "admin"}"#)
        #expect(beyond == 403)
    }

    @Test func aTokenSignsInAsItselfAndItsSessionEndsWhenItIsRevoked() async throws {
        let (daemon, connection) = try await Self.daemon()
        let created = try await daemon.client.createToken(named: "ops", role: .writer, scope: "/accounts")
        let (secret, session) = try await Self.signIn(connection, #"{"token": "\#(created.secret)"}"#)
        let sessionSecret = try #require(secret)
        #expect(session["name"] as? String == "ops" && session["role"] as? String == "writer")
        #expect(await connection.request("PUT", "/v1/prefs/a.b?scope=/accounts/x", token: sessionSecret, body: "1").status == 200)
        #expect(try await daemon.client.history(of: "a.b", scope: "/accounts/x").steps.first?.change.author.name == "token:ops")
        #expect(try await Self.signIn(connection, #"{"token": "file-t0ken"}"#).secret != nil, "the file token signs in too")
        for wrong in [#"{"token": "nope"}"#, #"{"token": "\#(sessionSecret)"}"#, #"{"code": "nope"}"#] {
            let (status, body) = await connection.request("POST", "/ui/session", token: nil, body: wrong)
            #expect(status == 401 && !body.contains("nope") && !body.contains(sessionSecret), "\(wrong)")
        }
        for malformed in ["{", "{}", #"{"token": "a", "code": "b"}"#, #"{"token": 3}"#, #"{"user": "x"}"#] {
            #expect(await connection.request("POST", "/ui/session", token: nil, body: malformed).status == 400, "\(malformed)")
        }
        try await daemon.client.revokeToken(named: "ops")
        #expect(await connection.request("GET", "/v1/status", token: sessionSecret).status == 401, "revoked with its token")
    }

    @Test func noSecretOrCodeReachesTheLogAndPrefsctlSaysWhatIsMissing() async throws {
        let (daemon, connection) = try await Self.daemon(arguments: ["--log-level", "debug"])
        let code = try await Self.code(daemon)
        let secret = try #require(try await Self.signIn(connection, #"{"code": "\#(code)"}"#).secret)
        _ = await connection.request("GET", "/v1/watch?key=a.b&count=0", token: secret)
        let json = try await daemon.prefsctl("--json", "ui", "--read-only")
        let link = try JSONDecoder().decode([String: String].self, from: Data(json.stdout.utf8))
        #expect(link["role"] == "reader" && link["scope"] == "/" && link["url"]?.contains("#signin=") == true && link["expiresAt"] != nil)
        // Where a browser is at hand ($BROWSER), the link is opened too; it still goes to standard output.
        let browser = daemon.folder.appending(path: "browser").path
        let opened = daemon.folder.appending(path: "opened").path
        try "#!/bin/sh\necho \"$1\" > \(opened)\n".write(toFile: browser, atomically: true, encoding: .utf8)
        chmod(browser, 0o700)
        var environment = ProcessInfo.processInfo.environment
        environment["BROWSER"] = browser
        let ui = try await CommandResult.runTool(
            CommandResult.binaries.appending(path: "prefsctl").path, ["--socket", daemon.socketPath, "ui"], environment: environment)
        #expect(ui.status == 0 && ui.stderr.contains("opened in your browser"), "\(ui.stderr)")
        // prefsctl does not wait for the browser.
        try await waitUntil("the browser got the link printed", timeout: .seconds(10)) {
            (try? String(contentsOfFile: opened, encoding: .utf8)) == ui.stdout
        }
        await daemon.expectCleanStop()
        let log = try String(contentsOf: daemon.folder.appending(path: "prefsd.stderr"), encoding: .utf8)
        #expect(log.contains("POST /ui/session"), "the request log is on")
        #expect(!log.contains(code) && !log.contains(secret) && !log.contains("file-t0ken"))

        let socketOnly = try await Daemon()
        let refused = try await socketOnly.prefsctl("ui")
        #expect(refused.status == 3 && refused.stderr.contains("--listen 127.0.0.1:PORT"), "\(refused.stderr)")
        #expect(try await socketOnly.prefsctl("ui", "--scope", "nope").status == 2)
    }
}
