import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The console: its files at `/ui/` and its sign-in at `/ui/session`, which need no token, and
/// `POST /v1/ui/links`, where `prefsctl ui` gets a sign-in link.
enum ConsoleEndpoints {
    /// The endpoints of `console`, signing in to `engine`'s tokens, within `limits`. `/ui/session`
    /// comes before `/ui/{file}`, which would take its path too.
    static func all(engine: any EngineServing, console: Console, limits: ServerLimits) -> [Endpoint] {
        [
            Endpoint(.get, "/ui", anonymous: true, waitsForRevision: false) { request in
                .now(try console.files.answer("index.html", ifNoneMatch: request.headers[.ifNoneMatch]))
            },
            Endpoint(.post, "/ui/session", body: .whole(limit: 4096), anonymous: true, waitsForRevision: false) { request in
                let signIn = try request.decodeBody(ConsoleSignIn.self, what: "a sign-in ({\"code\"} or {\"token\"})")
                let opened: (secret: String, session: ConsoleSessions.Session)?
                if let code = signIn.code {
                    opened = console.sessions.signIn(code: code)
                } else {
                    opened = console.access.tokenHolder(presenting: Array((signIn.token ?? "").utf8), engine: engine)
                        .map { console.sessions.signIn($0) }
                }
                guard let opened else {
                    throw PrefsError(
                        .unauthorized,
                        signIn.code != nil
                            ? "This sign-in link is used or expired (links work once, for two minutes): run prefsctl ui for a new one."
                            : "No such token: give prefsd --token-file's token, or a secret from prefsctl token create.")
                }
                var answer = Answer.json(ConsoleSessionInfo(opened.session, secret: opened.secret), status: .created)
                answer.fields.append(HTTPField(name: .cacheControl, value: "no-store"))
                return .now(answer)
            },
            Endpoint(.get, "/ui/session", waitsForRevision: false) { request in
                let caller = try request.signedIn()
                let session = BearerToken.credentials(request.headers[.authorization]).flatMap { console.sessions.session(forSecret: $0) }
                return .now(.json(ConsoleSessionInfo(caller, expiresAt: session?.expiresAt)))
            },
            Endpoint(.delete, "/ui/session", waitsForRevision: false) { request in
                _ = try request.signedIn()
                if let credentials = BearerToken.credentials(request.headers[.authorization]) {
                    console.sessions.signOut(secret: credentials)
                }
                return .now(Answer(status: .noContent, fields: [], body: .whole(.init())))
            },
            Endpoint(.get, "/ui/{file}", anonymous: true, waitsForRevision: false) { request in
                .now(try console.files.answer(request.parameters["file"] ?? "", ifNoneMatch: request.headers[.ifNoneMatch]))
            },
            Endpoint(.post, "/v1/ui/links", body: .whole(limit: limits.maximumRequestBytes), waitsForRevision: false) { request in
                guard let origin = console.origin else {
                    throw PrefsError(
                        .notFound, "prefsd serves its console on its TCP listener, and it has none: start prefsd with --listen 127.0.0.1:PORT.")
                }
                let caller = try request.signedIn()
                let asked =
                    request.body?.readableBytes ?? 0 == 0
                    ? ConsoleLinkRequest() : try request.decodeBody(ConsoleLinkRequest.self, what: "a sign-in link request ({\"role\", \"scope\"})")
                let role = asked.role ?? caller.grant.role
                let scope = asked.scope ?? caller.grant.scope
                try request.checkAccess(role, at: scope)
                let (code, expiresAt) = console.sessions.makeCode(for: caller, role: role, scope: scope)
                let link = ConsoleLink(url: "\(origin)/ui/#signin=\(code)", expiresAt: expiresAt, role: role, scope: scope)
                var answer = Answer.json(link, status: .created)
                answer.fields.append(HTTPField(name: .cacheControl, value: "no-store"))
                return .now(answer)
            },
        ]
    }
}

extension EndpointRequest {
    /// Who sent the request; `unauthorized` for a request to an endpoint that needs no token that
    /// carries none.
    fileprivate func signedIn() throws -> Caller {
        guard let caller else { throw ListenerAccess.unauthorized }
        return caller
    }
}
