import Foundation
import HTTPTypes
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import PrefsStore
import TestHarness
import Testing

@testable import PrefsServer

/// Sync's endpoints' refusals, through the API as every listener asks it: who may exchange, what
/// an exchange's body and a conflicts query may say, and a daemon with no upstream. (Exchanges
/// that go through, and a device daemon's sync, run on real daemons: the integration tests'
/// `SyncTests` and the contract test.)
@Suite struct SyncEndpointsTests {
    /// An answer's status and body.
    struct Answered {
        var status: Int
        var body: String
        /// The error code the body carries, if it is an error.
        var code: String? { (try? JSONDecoder().decode(ErrorBody.self, from: Data(body.utf8)))?.error.code }
    }

    /// `method target` with `body` asked of `api`, as a listener does: prepared, its body read,
    /// delivered, and the answer awaited.
    static func ask(
        _ api: API, _ method: HTTPRequest.Method, _ target: String, body: String? = nil, bearer: String? = nil
    ) async -> Answered {
        var fields: [HTTPField] = []
        if let bearer { fields.append(HTTPField(name: .authorization, value: "Bearer \(bearer)")) }
        var request = EndpointRequest(method: method, target: target, headers: RequestHeaders(fields))
        let delivery: Delivery
        switch api.prepare(&request) {
        case .answer(let answer):
            delivery = .answer(answer)
        case .endpoint(let endpoint):
            request.body = body.map { ByteBuffer(string: $0) }
            delivery = api.deliver(request, to: endpoint)
        }
        let answer: Answer
        switch delivery {
        case .answer(let now):
            answer = now
        case .pending(let start):
            answer = await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
        case .events(let feed):
            feed.end()
            return Answered(status: 200, body: "")
        }
        guard case .whole(let bytes) = answer.body else { return Answered(status: Int(answer.status.code), body: "") }
        return Answered(status: Int(answer.status.code), body: String(buffer: bytes))
    }

    /// The API of `store` on its Unix socket (the owner, an admin at `/`), and on a TCP listener
    /// (bearer tokens).
    static func apis(_ store: EmbeddedStore) -> (socket: API, tcp: API) {
        let socket = API(
            engine: store, limits: ServerLimits(), metrics: PrefsMetrics.factory(), peers: ConnectionPeers(),
            logger: Logger(label: "test"))
        return (socket, socket.listening(with: .bearer(fileToken: nil, sessions: ConsoleSessions())))
    }

    static let push = #"""
        {"cursor": 0, "mutations": [{"seq": 1, "key": "a.b", "scope": "/accounts/alice", "value": 1, "base": 0, "stamp": "1.0@"}]}
        """#

    @Test func onlyANamedTokenExchangesAndAReaderOnlyPulls() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (socket, tcp) = Self.apis(store)
            let owner = await Self.ask(socket, .post, "/v1/sync", body: #"{"cursor": 0}"#)
            #expect(owner.status == 403 && owner.code == "forbidden", "\(owner.body)")
            #expect(owner.body.contains("named token"))

            let reader = try await store.createToken(named: "phone", role: .reader, scope: "/accounts/alice").secret
            let pushing = await Self.ask(tcp, .post, "/v1/sync", body: Self.push, bearer: reader)
            #expect(pushing.status == 403 && pushing.code == "forbidden", "\(pushing.body)")
            #expect(try await store.resolve("a.b", scope: "/accounts/alice", explain: false).isSet == false, "nothing was pushed")

            let pulling = await Self.ask(tcp, .post, "/v1/sync", body: #"{"cursor": 0}"#, bearer: reader)
            #expect(pulling.status == 200, "\(pulling.body)")
            let answer = try WireJSON.decode(SyncAnswer.self, from: Data(pulling.body.utf8))
            #expect(answer.device == "phone" && answer.role == .reader && answer.scope == "/accounts/alice")
            #expect(answer.snapshot != nil, "a cursor of 0 starts with a snapshot")

            let nobody = await Self.ask(tcp, .post, "/v1/sync", body: #"{"cursor": 0}"#)
            #expect(nobody.status == 401 && nobody.code == "unauthorized")
        }
    }

    @Test(
        "An exchange's body is read strictly",
        arguments: [
            (#"{"cursor": 0, "since": 1}"#, "invalid_request"),
            (#"{"mutations": []}"#, "invalid_request"),
            (#"{"cursor": 0, "wait": 60001}"#, "invalid_request"),
            (#"{"cursor": 0, "wait": null}"#, "invalid_request"),
            (#"{"cursor": 0, "mutations": [{"seq": 1, "key": "a.b", "scope": "/", "base": 0, "stamp": "1.0@", "valu": 1}]}"#, "invalid_request"),
            (#"{"cursor": 0, "mutations": [{"seq": 1, "key": "a.b", "scope": "/", "base": 0, "stamp": "yesterday"}]}"#, "invalid_request"),
            (#"{"cursor": 0, "mutations": [{"seq": 1, "key": "a.b", "scope": "/", "base": 0, "stamp": "1.0@", "value": null}]}"#, "invalid_value"),
            (#"{"cursor": 0, "mutations": [{"seq": 1, "key": "a.b", "scope": "nope", "base": 0, "stamp": "1.0@"}]}"#, "invalid_scope"),
            ("{bad json", "invalid_json"),
        ])
    func anExchangesBodyIsReadStrictly(body: String, code: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = Self.apis(store)
            let writer = try await store.createToken(named: "laptop", role: .writer, scope: "/accounts/alice").secret
            let answered = await Self.ask(tcp, .post, "/v1/sync", body: body, bearer: writer)
            #expect(answered.status == 400, "\(answered.body)")
            #expect(answered.code == code, "\(answered.body)")
        }
    }

    @Test func aDaemonWithNoUpstreamSaysSo() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (socket, _) = Self.apis(store)
            for (method, target) in [(HTTPRequest.Method.get, "/v1/sync"), (.post, "/v1/sync:now"), (.post, "/v1/sync:now?timeout=5")] {
                let answered = await Self.ask(socket, method, target)
                #expect(answered.status == 404 && answered.code == "not_found", "\(target): \(answered.body)")
                #expect(answered.body.contains("no upstream"), "\(target): \(answered.body)")
            }
            for timeout in ["0", "601", "-1", "soon"] {
                let answered = await Self.ask(socket, .post, "/v1/sync:now?timeout=\(timeout)")
                #expect(answered.status == 400 && answered.code == "invalid_request", "timeout=\(timeout): \(answered.body)")
            }
        }
    }

    @Test func syncNowIsForAnAdminAtTheRoot() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (_, tcp) = Self.apis(store)
            let admin = try await store.createToken(named: "ops", role: .admin, scope: "/accounts").secret
            let answered = await Self.ask(tcp, .post, "/v1/sync:now", bearer: admin)
            #expect(answered.status == 403 && answered.code == "forbidden", "\(answered.body)")
            let reader = try await store.createToken(named: "watcher", role: .reader, scope: "/").secret
            let status = await Self.ask(tcp, .get, "/v1/sync", bearer: reader)
            #expect(status.status == 404 && status.code == "not_found", "a reader may ask; there is no upstream: \(status.body)")
        }
    }

    @Test func conflictsAreReadWithinTheCallersScope() async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let (socket, tcp) = Self.apis(store)
            let everything = await Self.ask(socket, .get, "/v1/conflicts?scope=/accounts&key=a.b&since=0&from=2026-01-01T00:00:00Z&limit=5&order=newest")
            #expect(everything.status == 200, "\(everything.body)")
            #expect(try WireJSON.decode(ConflictList.self, from: Data(everything.body.utf8)).conflicts.isEmpty)

            let reader = try await store.createToken(named: "phone", role: .reader, scope: "/accounts/alice").secret
            let own = await Self.ask(tcp, .get, "/v1/conflicts", bearer: reader)
            #expect(own.status == 200, "its own scope when none is given: \(own.body)")
            let below = await Self.ask(tcp, .get, "/v1/conflicts?scope=/accounts/alice/threads", bearer: reader)
            #expect(below.status == 200, "\(below.body)")
            for scope in ["/accounts/bob", "/accounts", "/"] {
                let beyond = await Self.ask(tcp, .get, "/v1/conflicts?scope=\(scope)", bearer: reader)
                #expect(beyond.status == 403 && beyond.code == "forbidden", "\(scope): \(beyond.body)")
            }
        }
    }

    @Test(
        "A conflicts query's items are checked",
        arguments: [
            ("scope=nope", "invalid_scope"), ("key=Bad", "invalid_key"), ("since=-1", "invalid_request"),
            ("from=yesterday", "invalid_request"), ("limit=0", "invalid_request"), ("limit=10001", "invalid_request"),
            ("order=sideways", "invalid_request"),
        ])
    func aConflictsQuerysItemsAreChecked(query: String, code: String) async throws {
        try await withStore(try EmbeddedStore.temporary()) { store in
            let answered = await Self.ask(Self.apis(store).socket, .get, "/v1/conflicts?\(query)")
            #expect(answered.status == 400, "\(query): \(answered.body)")
            #expect(answered.code == code, "\(query): \(answered.body)")
        }
    }
}
