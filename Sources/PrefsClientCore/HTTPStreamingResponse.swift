import Foundation

/// An answer whose body arrives over time (a watch).
package struct HTTPStreamingResponse: Sendable {
    package var status: Int
    /// The body's bytes as they arrive.
    package var body: AsyncThrowingStream<Data, any Error>

    package init(status: Int, body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.body = body
    }
}
