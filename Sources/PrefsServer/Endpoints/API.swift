import Foundation
import HTTPTypes
import Logging
import NIOCore
import PrefsEngine
import PrefsKit
import Prometheus

/// The HTTP API: every endpoint (``Endpoints``), and what every request passes on its way to one,
/// whichever listener and path carries it — who it is and what it may do (``ListenerAccess``: a
/// bearer token on TCP; 401 without one, 403 for an endpoint its role or scope does not reach),
/// routing (404, and 405 with `Allow`), `HEAD` answered as `GET`, the memo of cacheable answers, errors
/// worded as the API words them (internal ones logged), the request log, and the requests'
/// metrics (``RequestMetrics``): every answer is counted here, whichever path made it.
///
/// A listener turns bytes into an ``EndpointRequest``, asks ``prepare(_:)`` what comes of it,
/// reads its body as the endpoint says, asks ``deliver(_:to:)`` and sends the ``Delivery``.
final class API: Sendable {
    /// Where a request was routed.
    enum Route: Sendable {
        case endpoint(Endpoint)
        /// No endpoint answers it: the error to answer.
        case refused(PrefsError, allow: [HTTPRequest.Method])
    }

    /// Every endpoint.
    let endpoints: [Endpoint]
    /// The engine the endpoints serve.
    let engine: any EngineServing
    /// How the listener finds out what each request may do.
    let access: ListenerAccess
    /// Answers of cacheable endpoints, kept until the next change.
    let memo: AnswerMemo
    /// Every request counted, by endpoint and status, with its latency.
    let requests: RequestMetrics
    /// Requests counted by the token they carried, and those refused.
    let tokenRequests: TokenMetrics
    /// The programs on the Unix socket's connections, whom their changes are by.
    let peers: ConnectionPeers
    let logger: Logger
    /// Whether the logger takes the request log's debug lines: asked once, not per request.
    private let logsRequests: Bool
    /// Whether the engine records who makes each change: asked once, not per request.
    private let recordsAuthors: Bool

    /// The API of `engine` within `limits`, counting its requests with `metrics` and answering
    /// `GET /v1/metrics` from its registry, OFREP's flags as `ofrep` says, and `console`'s files
    /// and sign-in; `access` says what each request may do.
    init(
        engine: any EngineServing, limits: ServerLimits, ofrep: OFREPSettings = OFREPSettings(), console: Console = Console(listener: nil),
        metrics: PrometheusMetricsFactory, access: ListenerAccess = .owner, peers: ConnectionPeers, logger: Logger
    ) {
        self.engine = engine
        self.access = access
        self.peers = peers
        memo = AnswerMemo()
        self.logger = logger
        logsRequests = logger.logLevel <= .debug
        recordsAuthors = engine.recordsAuthors
        let all = Endpoints.all(engine: engine, limits: limits, ofrep: ofrep, console: console, registry: metrics.registry)
        endpoints = all.enumerated().map { index, endpoint in
            var endpoint = endpoint
            endpoint.index = index
            return endpoint
        }
        requests = RequestMetrics(endpoints: endpoints.map(\.name), factory: metrics)
        tokenRequests = TokenMetrics(factory: metrics)
    }

    /// The same API on a listener whose requests `access` lets through; the memo and the metrics
    /// are shared.
    func listening(with access: ListenerAccess) -> API {
        API(
            engine: engine, access: access, memo: memo, requests: requests, tokenRequests: tokenRequests, peers: peers,
            logger: logger, endpoints: endpoints)
    }

    private init(
        engine: any EngineServing, access: ListenerAccess, memo: AnswerMemo, requests: RequestMetrics,
        tokenRequests: TokenMetrics, peers: ConnectionPeers, logger: Logger, endpoints: [Endpoint]
    ) {
        self.engine = engine
        self.access = access
        self.memo = memo
        self.requests = requests
        self.tokenRequests = tokenRequests
        self.peers = peers
        self.logger = logger
        logsRequests = logger.logLevel <= .debug
        recordsAuthors = engine.recordsAuthors
        self.endpoints = endpoints
    }

    // MARK: Routing

    /// What comes of a request before its body is read.
    enum Preparation: Sendable {
        /// This answer: the request is refused (its token or what the token may do, its path or
        /// method), or a cacheable answer for it is kept.
        case answer(Answer)
        /// The endpoint answers it (its path parameters are filled in): read its body as the
        /// endpoint says, then ``deliver(_:to:)``.
        case endpoint(Endpoint)
    }

    /// Finds out what `request` may do, answers it from the memo if it can, else finds its
    /// endpoint and checks the request's role reaches it. A listener that has the request's
    /// `body` already gives it here, so that a kept answer to a body (an OFREP evaluation) is
    /// found before routing, as a `GET`'s is.
    func prepare(_ request: inout EndpointRequest, body: ByteBuffer? = nil) -> Preparation {
        guard let caller = access.caller(of: request, engine: engine) else { return prepareAnonymous(&request) }
        request.caller = caller
        let grant = caller.grant
        // A kept answer is the whole answer, as a grant reaching everywhere sees it.
        if grant.coversEverything, let kept = memo.answer(request.method, request.target, body: body, engine: engine) {
            log(request, kept.endpoint, kept.answer.status)
            return .answer(kept.answer)
        }
        switch route(&request) {
        case .endpoint(let endpoint):
            request.role = endpoint.role
            guard grant.role >= endpoint.role, !endpoint.storeWide || grant.coversEverything else {
                let scope = endpoint.storeWide ? .root : (try? ScopePath(request.query["scope"] ?? "/")) ?? .root
                let refusal = grant.refusal(needing: endpoint.role, at: scope, for: request.action)
                log(request, endpoint.index, .forbidden)
                return .answer(.error(refusal))
            }
            return .endpoint(endpoint)
        case .refused(let error, let allow): return .answer(refused(request, error, allow: allow))
        }
    }

    /// What comes of a request that carries no token the listener accepts: its endpoint, if that
    /// needs none (the console's files and sign-in); else `unauthorized`.
    private func prepareAnonymous(_ request: inout EndpointRequest) -> Preparation {
        guard case .endpoint(let endpoint) = route(&request), endpoint.anonymous else {
            log(request, requests.unrouted, .unauthorized)
            return .answer(.error(ListenerAccess.unauthorized))
        }
        return .endpoint(endpoint)
    }

    /// The endpoint `request` is for, its path parameters filled in; `HEAD` finds `GET`'s.
    func route(_ request: inout EndpointRequest) -> Route {
        guard let segments = request.parseTarget() else {
            return .refused(PrefsError(.invalidRequest, "The path is not percent-encoded UTF-8."), allow: [])
        }
        let method = request.method == .head ? .get : request.method
        if let endpoint = endpoints.first(where: { $0.method == method && $0.path.matches(segments) }) {
            request.parameters = endpoint.path.parameters(of: segments)
            return .endpoint(endpoint)
        }
        var allowed = endpoints.filter { $0.path.matches(segments) }.map(\.method)
        guard allowed.isEmpty else {
            if allowed.contains(.get) { allowed.append(.head) }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            return .refused(
                PrefsError(.methodNotAllowed, "\(request.method.rawValue) is not allowed on \(request.path); it takes \(names)."),
                allow: allowed)
        }
        return .refused(PrefsError(.notFound, "No such endpoint: \(request.path); see the API in openapi.yaml."), allow: [])
    }

    // MARK: Delivering

    /// What to send for `request`, prepared for `endpoint` (``prepare(_:)``), its body read.
    func deliver(_ request: EndpointRequest, to endpoint: Endpoint) -> Delivery {
        run(endpoint, for: request)
    }

    /// What to send for `request`, which has no body: ``prepare(_:)`` and ``deliver(_:to:)`` in one.
    func deliver(_ request: EndpointRequest) -> Delivery {
        var request = request
        switch prepare(&request) {
        case .answer(let answer): return .answer(answer)
        case .endpoint(let endpoint): return run(endpoint, for: request)
        }
    }

    /// The error of a body over `limit` bytes.
    static func bodyTooLarge(limit: Int) -> PrefsError {
        PrefsError(.tooLarge, "The request body is over the limit of \(limit) bytes; nothing was changed.")
    }

    /// Who makes `request`'s changes: on the TCP listener, its token (`token:NAME`); on the
    /// Unix socket, the daemon's user and the connection's program; with the `User-Agent`
    /// either way.
    private func author(of request: EndpointRequest) -> ChangeAuthor {
        let userAgent = request.headers[.userAgent]
        if let token = request.caller?.tokenName {
            return ChangeAuthor(name: AccessToken.authorName(of: token), agent: userAgent)
        }
        return peers.author(of: request.connection, userAgent: userAgent)
    }

    /// How the token metrics name the console sessions a `prefsctl ui` link on the socket opened.
    private static let consoleOwner = "console"

    private func refused(_ request: EndpointRequest, _ error: PrefsError, allow: [HTTPRequest.Method]) -> Answer {
        var answer = Answer.error(error)
        if !allow.isEmpty {
            answer.fields.append(HTTPField(name: .allow, value: allow.map(\.rawValue).joined(separator: ", ")))
        }
        log(request, requests.unrouted, answer.status)
        return answer
    }

    /// Runs `endpoint` for `request` once the engine has the revision it asks for
    /// (`minRevision`), and words what fails.
    private func run(_ endpoint: Endpoint, for request: EndpointRequest) -> Delivery {
        // A cacheable answer to a body (an OFREP evaluation) is found once the body is read.
        if endpoint.cacheable, endpoint.body != .none, request.grant?.coversEverything == true,
            let kept = memo.answer(request.method, request.target, body: request.body ?? ByteBuffer(), engine: engine)
        {
            log(request, kept.endpoint, kept.answer.status)
            return .answer(kept.answer)
        }
        let minimum: Revision?
        do {
            minimum = endpoint.waitsForRevision ? try request.integer("minRevision") : nil
        } catch {
            return .answer(failed(endpoint, request, error))
        }
        guard let minimum, minimum > engine.committedRevision else { return runNow(endpoint, for: request) }
        return .pending { [self] deliver in
            Task {
                do {
                    try await engine.waitForRevision(minimum)
                } catch {
                    return deliver(failed(endpoint, request, error))
                }
                switch runNow(endpoint, for: request) {
                case .answer(let answer): deliver(answer)
                case .pending(let start): start(deliver)
                case .events: preconditionFailure("a watch does not wait for a revision")
                }
            }
        }
    }

    /// Runs `endpoint` for `request`, and words what fails.
    private func runNow(_ endpoint: Endpoint, for sent: EndpointRequest) -> Delivery {
        // Read before the answer is made: a kept answer may be newer than its revision, never older.
        let revision = endpoint.cacheable ? engine.committedRevision : 0
        let reply: Reply
        var filled = sent
        do {
            filled.writeContext = try sent.writeContext(recordingAuthors: recordsAuthors, author: author(of:))
            reply = try endpoint.answer(filled)
        } catch {
            return .answer(failed(endpoint, sent, error))
        }
        let request = filled
        switch reply {
        case .now(let answer):
            // Kept only as a grant reaching everywhere sees it: a scoped caller's may leave things out.
            if endpoint.cacheable, answer.status == .ok, case .whole = answer.body, request.grant?.coversEverything == true {
                memo.keep(answer, of: endpoint.index, for: request.method, request.target, body: request.body, at: revision)
            }
            log(request, endpoint.index, answer.status)
            return .answer(answer)
        case .later(let start):
            return .pending { [self] deliver in
                start { [self] result in deliver(finished(endpoint, request, result)) }
            }
        case .task(let work):
            return .pending { [self] deliver in
                Task {
                    let result: Result<Answer, any Error>
                    do {
                        result = .success(try await work())
                    } catch {
                        result = .failure(error)
                    }
                    deliver(finished(endpoint, request, result))
                }
            }
        case .events(let feed) where feed.isOpen:
            log(request, endpoint.index, .ok)
            return .events(feed)
        case .events(let feed):
            // A watch resumed from before the change log opens once the engine has read what
            // compaction dropped: the head waits, so that a refusal is its status (410).
            return .pending { [self] deliver in
                feed.whenOpen { [self] error in
                    if let error {
                        feed.end()
                        deliver(failed(endpoint, request, error))
                    } else {
                        log(request, endpoint.index, .ok)
                        deliver(Answer(status: .ok, fields: ServerSentEvent.headFields, body: .events(feed)))
                    }
                }
            }
        }
    }

    private func finished(_ endpoint: Endpoint, _ request: EndpointRequest, _ result: Result<Answer, any Error>) -> Answer {
        switch result {
        case .success(let answer):
            log(request, endpoint.index, answer.status)
            return answer
        case .failure(let error):
            return failed(endpoint, request, error)
        }
    }

    /// The answer of a request that failed with `error`.
    private func failed(_ endpoint: Endpoint, _ request: EndpointRequest, _ error: any Error) -> Answer {
        let prefsError = Self.prefsError(for: error)
        if prefsError.code == .internal {
            logger.error("\(request.method.rawValue) \(request.path) failed: \(String(reflecting: error))")
        }
        let answer = Answer.error(prefsError)
        log(request, endpoint.index, answer.status)
        return answer
    }

    /// Counts a request answered by the endpoint at index `endpoint` (``RequestMetrics``), and
    /// logs one line for it when debugging.
    private func log(_ request: EndpointRequest, _ endpoint: Int, _ status: HTTPResponse.Status) {
        requests.record(endpoint, status, since: request.received)
        if case .bearer = access { tokenRequests.record(request.caller.map { $0.tokenName ?? Self.consoleOwner }, status) }
        guard logsRequests else { return }
        logger.debug("\(request.method.rawValue) \(request.target) → \(status.code) (\(requests.name(of: endpoint)))")
    }

    /// `error` as the API words it: a ``PrefsError`` as it is; a request body that could not be
    /// read or parsed as the fitting 4xx; anything else `internal` — a bug, never bad input.
    static func prefsError(for error: any Error) -> PrefsError {
        switch error {
        case let error as PrefsError:
            return error
        case let error as DecodingError:
            return PrefsError(.invalidRequest, "The request body does not have the expected shape: \(error.readableReason)")
        case let error as any BodyError:
            return error.prefsError
        default:
            return PrefsError(.internal, "Internal error: \(error)")
        }
    }
}

/// An error reading a request's body that a listener's HTTP library reports in its own terms
/// (a body too large, one that cannot be framed): how the API words it.
protocol BodyError: Error {
    var prefsError: PrefsError { get }
}
