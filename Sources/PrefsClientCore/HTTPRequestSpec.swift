import Foundation

/// One HTTP request to the daemon.
public struct HTTPRequestSpec: Sendable {
    public var method: String
    /// Path and query, percent-encoded: `/v1/prefs/a.b?scope=%2Fx`.
    public var target: String
    public var body: Data?
    public var headers: [(String, String)]

    public init(method: String, target: String, body: Data? = nil, headers: [(String, String)] = []) {
        self.method = method
        self.target = target
        self.body = body
        self.headers = headers
    }
}
