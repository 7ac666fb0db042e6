import Foundation
import PrefsKit
import Synchronization

/// The daemon, as a ``PrefsService``: every call is one request to `prefsd` over its Unix
/// socket, and every answer (and error) is the same as the embedded store's.
///
/// This module has the client and its transport (`UnixSocketTransport`: keep-alive
/// connections on plain POSIX calls), and links no networking library, so a one-shot tool such
/// as `prefsctl` starts fast and an application builds fast; applications import the
/// `PrefsClient` module, which adds `PrefsClient(socketPath:)`.
///
/// ```swift
/// let prefs: any PrefsService = PrefsClient(socketPath: "/run/user/1000/prefsd/prefsd.sock")
/// try await prefs.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
/// ```
public final class PrefsClient: PrefsService {
    /// How requests reach the daemon.
    package let transport: any HTTPTransport
    /// The newest revision a write through this client answered. Reads pass it as
    /// `minRevision`, so a program reads its own writes whichever host of a shared PostgreSQL
    /// database answers them (on one host, it is always there already).
    private let writtenRevision = Atomic<Revision>(0)

    /// How long a write whose answer was lost is sent again (with the same `Idempotency-Key`)
    /// before it fails as `outcome_unknown`.
    public let writeRetryDeadline: Duration

    /// What the client's writes say sent them (`User-Agent`): the change log records it with
    /// each change, beside the program's name.
    public let userAgent: String

    /// The `User-Agent` of a client that names none.
    public static let defaultUserAgent = "PrefsClient/\(prefsVersion)"

    /// A client over any transport, e.g. `UnixSocketTransport`, which sends a write whose
    /// answer was lost again for up to `writeRetryDeadline` (10 seconds by default: long enough
    /// for a daemon that is restarted at once), saying it is `userAgent`.
    package init(
        transport: any HTTPTransport, writeRetryDeadline: Duration = .seconds(10), userAgent: String = PrefsClient.defaultUserAgent
    ) {
        self.transport = transport
        self.writeRetryDeadline = writeRetryDeadline
        self.userAgent = userAgent
    }

    public func status() async throws -> ServiceStatus {
        try await call("GET", "/v1/status")
    }

    /// The daemon's metrics in Prometheus' text format (`GET /v1/metrics`).
    public func metricsText() async throws -> String {
        let response = try await transport.send(HTTPRequestSpec(method: "GET", target: "/v1/metrics"))
        guard response.status == 200 else { throw Self.error(status: response.status, body: response.body) }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Asks the daemon to answer once it has taken in `revision` (`GET /v1/status?minRevision=`).
    ///
    /// - Parameter revision: The revision to wait for.
    /// - Throws: ``PrefsError`` — `behind`, with the revision the daemon has, if it has not taken
    ///   it in after a short wait.
    public func waitForRevision(_ revision: Revision) async throws {
        let _: ServiceStatus = try await call("GET", "/v1/status", query: ["minRevision": String(revision)])
    }

    public func resolve(_ key: KeyName, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        let spec = Self.resolveRequest(key, scope: scope, explain: explain, minRevision: minimumRevision)
        return try Self.resolution(try await transport.send(spec), answering: spec)
    }

    /// ``resolve(_:scope:explain:)`` on the calling thread, which waits for the answer: for a
    /// one-shot process (`prefsctl get`) that has nothing else to do and so starts no threads.
    package static func resolve(
        _ key: KeyName, scope: ScopePath, explain: Bool, waitingOn transport: UnixSocketTransport
    ) throws -> ResolvedPreference {
        let spec = resolveRequest(key, scope: scope, explain: explain)
        return try resolution(try transport.sendBlocking(spec), answering: spec)
    }

    /// The answer to a resolve: read directly when it is the daemon's compact form, else decoded.
    private static func resolution(_ response: HTTPResponseData, answering spec: HTTPRequestSpec) throws
        -> ResolvedPreference
    {
        if (200..<300).contains(response.status), let resolved = ResolvedPreference(compactWireJSON: response.body) {
            return resolved
        }
        return try decode(response, answering: spec)
    }

    private static func resolveRequest(_ key: KeyName, scope: ScopePath, explain: Bool, minRevision: String? = nil)
        -> HTTPRequestSpec
    {
        HTTPRequestSpec(
            method: "GET",
            target: target(
                "/v1/prefs/\(key)",
                query: [("scope", scope.path), ("explain", explain ? "1" : nil), ("minRevision", minRevision)]))
    }

    /// The `minRevision` a read passes: the newest revision this client wrote, if any.
    private var minimumRevision: String? {
        let revision = writtenRevision.load(ordering: .relaxed)
        return revision > 0 ? String(revision) : nil
    }

    public func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference] {
        struct Answer: Decodable { var preferences: [ResolvedPreference] }
        let answer: Answer = try await call("GET", "/v1/prefs", query: ["scope": scope.path, "prefix": prefix])
        return answer.preferences
    }

    @discardableResult
    public func set(_ key: KeyName, to value: JSONValue, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await call(
            "PUT", "/v1/prefs/\(key)", query: ["scope": scope.path], body: value.canonicalData,
            headers: Self.ifMatch(ifRevision))
    }

    @discardableResult
    public func reset(_ key: KeyName, scope: ScopePath, recursive: Bool, ifRevision: Revision?) async throws -> WriteResult {
        try await call(
            "DELETE", "/v1/prefs/\(key)", query: ["scope": scope.path, "recursive": recursive ? "1" : nil],
            headers: Self.ifMatch(ifRevision))
    }

    @discardableResult
    public func apply(_ batch: PreferenceBatch) async throws -> WriteResult {
        try await call("POST", "/v1/prefs:batch", body: try Self.encoder.encode(batch))
    }

    @discardableResult
    public func lock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await call("PUT", "/v1/locks/\(key)", query: ["scope": scope.path], headers: Self.ifMatch(ifRevision))
    }

    @discardableResult
    public func unlock(_ key: KeyName, scope: ScopePath, ifRevision: Revision?) async throws -> WriteResult {
        try await call("DELETE", "/v1/locks/\(key)", query: ["scope": scope.path], headers: Self.ifMatch(ifRevision))
    }

    public func schemas() async throws -> [String: PreferenceSchema] {
        struct Answer: Decodable { var schemas: [String: PreferenceSchema] }
        let answer: Answer = try await call("GET", "/v1/schema")
        return answer.schemas
    }

    @discardableResult
    public func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult {
        try await call("PUT", "/v1/schema", body: try Self.encoder.encode(schemas))
    }

    public func dump(scope: ScopePath) async throws -> PrefsDump {
        try await call("GET", "/v1/dump", query: ["scope": scope.path])
    }

    @discardableResult
    public func load(_ dump: PrefsDump, replacing: Bool) async throws -> WriteResult {
        try await call("POST", "/v1/load", query: ["replace": replacing ? "1" : nil], body: try Self.encoder.encode(dump))
    }

    public func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error> {
        var query: [(String, String?)] = request.keys.map { ("key", $0) } + request.prefixes.map { ("prefix", $0) }
        query.append(("scope", request.scope?.path))
        query.append(("since", request.since.map(String.init)))
        query.append(("draft", request.draft?.uuidString))
        query.append(("thread", request.thread))
        query.append(("account", request.account))
        let spec = HTTPRequestSpec(method: "GET", target: Self.target("/v1/watch", query: query))
        let transport = transport
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let response = try await Self.succeeded(try await transport.stream(spec))
                    var parser = ServerSentEventParser()
                    for try await chunk in response.body {
                        for message in parser.consume(chunk) {
                            continuation.yield(try Self.changeEvent(from: message))
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: - Requests

    /// The API's encoder (``WireJSON``); answers are decoded with ``WireJSON/decode(_:from:)``,
    /// every number exactly.
    static let encoder = WireJSON.encoder()

    /// The `If-Match` header naming the revision a change is based on, if any.
    static func ifMatch(_ revision: Revision?) -> [(String, String)] {
        revision.map { [("If-Match", "\"\($0)\"")] } ?? []
    }

    /// Sends one request and decodes its answer, or throws the error it carries.
    func call<Answer: Decodable>(
        _ method: String, _ path: String, query: KeyValuePairs<String, String?> = [:], body: Data? = nil,
        headers: [(String, String)] = []
    ) async throws -> Answer {
        var query = Array(query)
        if method == "GET", !query.contains(where: { $0.0 == "minRevision" }) { query.append(("minRevision", minimumRevision)) }
        let spec = HTTPRequestSpec(method: method, target: Self.target(path, query: query), body: body, headers: headers)
        let answer: Answer = try Self.decode(try await exchange(spec, send: transport.send), answering: spec)
        if let written = answer as? WriteResult { writtenRevision.max(written.revision, ordering: .relaxed) }
        return answer
    }

    /// The answer to `spec` as `Answer`, or the error it carries.
    static func decode<Answer: Decodable>(_ response: HTTPResponseData, answering spec: HTTPRequestSpec) throws -> Answer {
        guard (200..<300).contains(response.status) else {
            throw error(status: response.status, body: response.body)
        }
        do {
            return try WireJSON.decode(Answer.self, from: response.body)
        } catch {
            throw PrefsError(.internal, "prefsd's answer to \(spec.method) \(spec.target) could not be read: \(error)")
        }
    }

    /// A streamed answer that succeeded; otherwise the error its body carries.
    static func succeeded(_ response: HTTPStreamingResponse) async throws -> HTTPStreamingResponse {
        guard response.status == 200 else {
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            throw error(status: response.status, body: body)
        }
        return response
    }

    static func target(_ path: String, query: [(String, String?)]) -> String {
        var target = path
        for (name, value) in query {
            guard let value else { continue }
            target += target.utf8.count == path.utf8.count ? "?" : "&"
            target += name + "=" + percentEncoded(value)
        }
        return target
    }

    /// `text` percent-encoded for a query value, where `/`, `:` and `@` may stay.
    private static func percentEncoded(_ text: String) -> String {
        PercentEncoding.queryValue(text)
    }

    /// `text` percent-encoded as one path segment.
    static func pathSegment(_ text: String) -> String {
        PercentEncoding.encoded(text, keeping: "-._~")
    }

    static func error(status: Int, body: Data) -> PrefsError {
        if let decoded = try? WireJSON.decode(ErrorBody.self, from: body) {
            return decoded.prefsError(httpStatus: status)
        }
        return PrefsError(PrefsError.Code(httpStatus: status), "prefsd answered HTTP \(status).")
    }

    private static func changeEvent(from message: ServerSentEventParser.Event) throws -> ChangeEvent {
        let data = Data(message.data.utf8)
        if message.event == "error" {
            let body = try WireJSON.decode(ErrorBody.self, from: data)
            throw body.prefsError(httpStatus: 500)
        }
        return try WireJSON.decode(ChangeEvent.self, from: data)
    }
}
