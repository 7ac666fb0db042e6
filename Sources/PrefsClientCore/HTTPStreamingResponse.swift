import Foundation

/// An answer whose body arrives over time (a watch).
public struct HTTPStreamingResponse: Sendable {
    public var status: Int
    /// The body's bytes as they arrive.
    public var body: AsyncThrowingStream<Data, any Error>

    public init(status: Int, body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.body = body
    }
}
