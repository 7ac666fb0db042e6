import Foundation
import PrefsKit

/// The daemon, as a ``PrefsService``: every call is one request to `prefsd` over its Unix
/// socket, and every answer (and error) is the same as the embedded store's.
///
/// ```swift
/// let prefs: any PrefsService = PrefsClient(socketPath: "/run/user/1000/prefsd/prefsd.sock")
/// try await prefs.set("timeline.fontSize", to: 15, scope: "/accounts/alice")
/// ```
public final class PrefsClient: PrefsService {
    /// How requests reach the daemon.
    public let transport: any HTTPTransport

    /// A client over AsyncHTTPClient (pooled keep-alive connections): for applications.
    public convenience init(socketPath: String) {
        self.init(transport: AsyncHTTPClientTransport(socketPath: socketPath))
    }

    /// A client over any transport, e.g. ``UnixSocketTransport`` for one-shot processes.
    public init(transport: any HTTPTransport) {
        self.transport = transport
    }

    public func status() async throws -> ServiceStatus {
        try await call("GET", "/v1/status")
    }

    public func resolve(_ key: String, scope: ScopePath, explain: Bool) async throws -> ResolvedPreference {
        try await call("GET", "/v1/prefs/\(try pathKey(key))", query: ["scope": scope.path, "explain": explain ? "1" : nil])
    }

    public func list(scope: ScopePath, prefix: String?) async throws -> [ResolvedPreference] {
        struct Answer: Decodable { var preferences: [ResolvedPreference] }
        let answer: Answer = try await call("GET", "/v1/prefs", query: ["scope": scope.path, "prefix": prefix])
        return answer.preferences
    }

    @discardableResult
    public func set(_ key: String, to value: JSONValue, scope: ScopePath) async throws -> WriteResult {
        try await call("PUT", "/v1/prefs/\(try pathKey(key))", query: ["scope": scope.path], body: value.canonicalData)
    }

    @discardableResult
    public func reset(_ key: String, scope: ScopePath, recursive: Bool) async throws -> WriteResult {
        try await call(
            "DELETE", "/v1/prefs/\(try pathKey(key))", query: ["scope": scope.path, "recursive": recursive ? "1" : nil])
    }

    @discardableResult
    public func apply(_ batch: PreferenceBatch) async throws -> WriteResult {
        try await call("POST", "/v1/prefs:batch", body: try JSONEncoder().encode(batch))
    }

    @discardableResult
    public func lock(_ key: String, scope: ScopePath) async throws -> WriteResult {
        try await call("PUT", "/v1/locks/\(try pathKey(key))", query: ["scope": scope.path])
    }

    @discardableResult
    public func unlock(_ key: String, scope: ScopePath) async throws -> WriteResult {
        try await call("DELETE", "/v1/locks/\(try pathKey(key))", query: ["scope": scope.path])
    }

    public func schemas() async throws -> [String: PreferenceSchema] {
        struct Answer: Decodable { var schemas: [String: PreferenceSchema] }
        let answer: Answer = try await call("GET", "/v1/schema")
        return answer.schemas
    }

    @discardableResult
    public func register(schemas: [String: PreferenceSchema]) async throws -> WriteResult {
        try await call("PUT", "/v1/schema", body: try JSONEncoder().encode(schemas))
    }

    public func dump(scope: ScopePath) async throws -> PrefsDump {
        try await call("GET", "/v1/dump", query: ["scope": scope.path])
    }

    @discardableResult
    public func load(_ dump: PrefsDump) async throws -> WriteResult {
        try await call("POST", "/v1/load", body: try JSONEncoder().encode(dump))
    }

    public func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error> {
        var query: [(String, String?)] = request.keys.map { ("key", $0) } + request.prefixes.map { ("prefix", $0) }
        query.append(("scope", request.scope?.path))
        query.append(("since", request.since.map(String.init)))
        let spec = HTTPRequestSpec(method: "GET", target: Self.target("/v1/watch", query: query))
        let transport = transport
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let response = try await transport.stream(spec)
                    guard response.status == 200 else {
                        var body = Data()
                        for try await chunk in response.body { body.append(chunk) }
                        throw Self.error(status: response.status, body: body)
                    }
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

    private func call<Answer: Decodable>(
        _ method: String, _ path: String, query: KeyValuePairs<String, String?> = [:], body: Data? = nil
    ) async throws -> Answer {
        let spec = HTTPRequestSpec(method: method, target: Self.target(path, query: Array(query)), body: body)
        let response = try await transport.send(spec)
        guard (200..<300).contains(response.status) else {
            throw Self.error(status: response.status, body: response.body)
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: response.body)
        } catch {
            throw PrefsError(.internal, "prefsd's answer to \(method) \(path) could not be read: \(error)")
        }
    }

    private func pathKey(_ key: String) throws -> String {
        try KeyName.validate(key)
        return key
    }

    static func target(_ path: String, query: [(String, String?)]) -> String {
        let items = query.compactMap { name, value in value.map { "\(name)=\(percentEncoded($0))" } }
        return items.isEmpty ? path : path + "?" + items.joined(separator: "&")
    }

    private static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/:@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func error(status: Int, body: Data) -> PrefsError {
        if let decoded = try? JSONDecoder().decode(ErrorBody.self, from: body) {
            return decoded.prefsError(httpStatus: status)
        }
        return PrefsError(PrefsError.Code(httpStatus: status), "prefsd answered HTTP \(status).")
    }

    private static func changeEvent(from message: ServerSentEventParser.Event) throws -> ChangeEvent {
        let data = Data(message.data.utf8)
        if message.event == "error" {
            let body = try JSONDecoder().decode(ErrorBody.self, from: data)
            throw body.prefsError(httpStatus: 500)
        }
        return try JSONDecoder().decode(ChangeEvent.self, from: data)
    }
}
