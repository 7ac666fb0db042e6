import Foundation

/// A complete answer.
public struct HTTPResponseData: Sendable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}
