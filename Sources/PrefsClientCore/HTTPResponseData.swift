import Foundation

/// A complete answer.
package struct HTTPResponseData: Sendable {
    package var status: Int
    package var body: Data
    /// The header fields, names lowercased, in order.
    package var headers: [(name: String, value: String)]

    package init(status: Int, body: Data, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// The value of the first header field named `name` (any case), if any.
    package func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name == wanted }?.value
    }
}
