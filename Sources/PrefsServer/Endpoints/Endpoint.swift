import HTTPTypes
import PrefsKit

/// One endpoint of the HTTP API, declared once: the method and path it answers, the body it
/// takes, and how it answers — calling the service and shaping the reply. Every listener and
/// every path through it (the router, the raw-bytes fast path) answers a request by this
/// definition, through ``API``.
struct Endpoint: Sendable {
    /// What a request's body is to the endpoint.
    enum Body: Sendable, Equatable {
        /// None: a request with a body is answered as if it had none.
        case none
        /// Read whole, at most this many bytes (a larger one is `too_large`).
        case whole(limit: Int)
        /// Streamed to the service as it arrives (an upload), with the limit the service keeps.
        case streamed
    }

    /// The method, e.g. `GET`.
    let method: HTTPRequest.Method
    /// The path, with `{name}` for a parameter segment, e.g. `/v1/prefs/{key}`.
    let path: EndpointPath
    /// What the endpoint does with a body.
    let body: Body
    /// The least role a request needs (``AccessGrant``). Where the endpoint acts at a scope, it
    /// checks the grant reaches that scope as it reads it (``EndpointRequest/scope()``).
    let role: AccessRole
    /// Whether a request needs no token: the console's files, and its sign-in. Such a request that
    /// carries none has no ``EndpointRequest/caller``.
    let anonymous: Bool
    /// Whether the endpoint acts on the whole store rather than at a scope — schemas, metrics —
    /// so that only a grant at `/` may call it.
    let storeWide: Bool
    /// Whether an answer may be kept and given again to the same request until the next change
    /// is taken in: a read from memory whose answer depends on nothing but the request's target
    /// (and its body, for one that reads a body: an OFREP evaluation's context).
    let cacheable: Bool
    /// Whether a request's `minRevision=R` makes it wait until the engine has taken in revision
    /// `R` (a revision another host of the same database answered): every endpoint but the
    /// watch, which says where it starts with `since`.
    let waitsForRevision: Bool
    /// Answers a request: at once, or with what will answer it (``Reply``). Throws the error to
    /// answer instead.
    let answer: @Sendable (EndpointRequest) throws -> Reply
    /// The endpoint's place in the API's table, under which its requests are counted (``API``
    /// fills it in).
    var index = 0

    /// An endpoint answering `method` requests to `path` with `answer`, for callers with at least
    /// `role` (at `/`, if `storeWide`), or by anyone if `anonymous`.
    init(
        _ method: HTTPRequest.Method, _ path: String, body: Body = .none, role: AccessRole = .reader, anonymous: Bool = false,
        storeWide: Bool = false, cacheable: Bool = false, waitsForRevision: Bool = true, answer: @escaping @Sendable (EndpointRequest) throws -> Reply
    ) {
        self.method = method
        self.path = EndpointPath(path)
        self.body = body
        self.role = role
        self.anonymous = anonymous
        self.storeWide = storeWide
        self.cacheable = cacheable
        self.waitsForRevision = waitsForRevision
        self.answer = answer
    }

    /// `GET /v1/prefs/{key}`: how logs and metrics name the endpoint.
    var name: String { "\(method.rawValue) \(path.template)" }
}
