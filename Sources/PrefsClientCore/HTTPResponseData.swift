import Foundation

/// A complete answer.
package struct HTTPResponseData: Sendable {
    package var status: Int
    package var body: Data

    package init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}
