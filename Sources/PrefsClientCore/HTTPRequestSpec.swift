import Foundation

/// One HTTP request to the daemon.
package struct HTTPRequestSpec: Sendable {
    package var method: String
    /// Path and query, percent-encoded: `/v1/prefs/a.b?scope=%2Fx`.
    package var target: String
    package var body: Data?
    package var headers: [(String, String)]

    package init(method: String, target: String, body: Data? = nil, headers: [(String, String)] = []) {
        self.method = method
        self.target = target
        self.body = body
        self.headers = headers
    }
}
