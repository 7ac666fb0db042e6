import Foundation
import NIOCore

/// A streamed request body (an upload) on the general HTTP/1 path (``DecodedAnswerHandler``):
/// the connection yields the body's buffers as they arrive, and the endpoint reads them one at a
/// time. While more than a few buffers wait unread, the connection reads no more from the socket,
/// so a slow consumer slows the sender down instead of the body piling up in memory.
struct UploadBody {
    /// What tells the connection to read again, once the endpoint has taken what waited; its
    /// calls come from any thread.
    struct Demand: NIOAsyncSequenceProducerDelegate {
        /// The body is wanted again.
        let wanted: @Sendable () -> Void
        /// The endpoint stopped reading (done, failed, or gone): what is left is dropped.
        let ended: @Sendable () -> Void

        func produceMore() { wanted() }
        func didTerminate() { ended() }
    }

    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand
    >

    /// Where the connection yields the body's buffers, and finishes it.
    let source: Producer.Source
    /// The body as the endpoint reads it.
    let stream: AsyncThrowingStream<Data, any Error>

    /// A body whose reader's demand is reported to `demand`.
    init(demand: Demand) {
        let made = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: true, delegate: demand)
        source = made.source
        let reader = Reader(made.sequence)
        stream = AsyncThrowingStream { try await reader.next() }
    }

    /// Pulls the body one buffer at a time, as the endpoint asks.
    private actor Reader {
        private var buffers: Producer.AsyncIterator

        init(_ sequence: Producer) {
            buffers = sequence.makeAsyncIterator()
        }

        func next() async throws -> Data? {
            // An actor's stored iterator cannot be advanced in place across a suspension.
            var iterator = buffers
            defer { buffers = iterator }
            return try await iterator.next(isolation: self).map { Data($0.readableBytesView) }
        }
    }
}
