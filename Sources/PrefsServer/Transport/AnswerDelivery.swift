import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// What a listener sends for an answer or a watch, decided in one place for both transports —
/// ``FrontAnswerHandler`` writing bytes (``AnswerEncoding``) and ``DecodedAnswerHandler`` writing
/// response parts through NIO's encoder: the head (status, the answer's own fields, and the body's length, or
/// none for a stream of unknown length) and what follows it. A `HEAD` request gets the head
/// alone: a file is not read, and a watch ends at once.
///
/// The transports only pump what it says, from their event loop: a file a chunk at a time, each
/// once the one before is written; a watch's events as the feed has them, while the connection
/// takes them.
struct AnswerDelivery {
    /// What follows the head.
    enum Body {
        /// Nothing: the answer to a `HEAD` request.
        case none
        /// These bytes.
        case whole(ByteBuffer)
        /// A file, a chunk at a time as the engine reads it.
        case file(AsyncThrowingStream<Data, any Error>)
        /// A watch's events as Server-Sent Events: ``ServerSentEvent/opening``, then each item's
        /// ``AnswerDelivery/part(for:)`` until the end.
        case events(any WatchFeed)
    }

    /// What an item of a watch's feed adds to its stream.
    enum EventPart {
        /// These bytes: an event.
        case write(Data)
        /// Nothing yet: wait for the feed to wake.
        case wait
        /// The stream ends, after these last bytes (an `error` event) if any.
        case end(last: Data?)
    }

    /// The answer's status.
    let status: HTTPResponse.Status
    /// The answer's own header fields, in order.
    let fields: [HTTPField]
    /// The body's length; nil for a stream of unknown length (chunked).
    let contentLength: Int?
    /// What follows the head.
    let body: Body
    /// Whether the connection closes after it, whatever the request asked: a watch's does.
    let closes: Bool

    /// `answer`, to a request made with `method`.
    /// - Parameters:
    ///   - answer: The answer.
    ///   - method: The request's method: `HEAD` gets the head alone.
    init(_ answer: Answer, method: HTTPRequest.Method) {
        switch answer.body {
        case .events(let feed): self.init(events: feed, method: method)
        case .whole(let bytes): self.init(answer, body: method == .head ? .none : .whole(bytes))
        case .streamed(_, let chunks): self.init(answer, body: method == .head ? .none : .file(chunks))
        }
    }

    /// `answer`, a whole or streamed one, with `body` after its head.
    private init(_ answer: Answer, body: Body) {
        status = answer.status
        fields = answer.fields
        contentLength = answer.body.length
        closes = false
        self.body = body
    }

    /// A watch's events, to a request made with `method`.
    /// - Parameters:
    ///   - feed: The watch; ended at once for `HEAD`.
    ///   - method: The request's method: `HEAD` gets the head alone.
    init(events feed: any WatchFeed, method: HTTPRequest.Method) {
        status = .ok
        fields = ServerSentEvent.headFields
        contentLength = nil
        closes = true
        if method == .head {
            feed.end()
            body = .none
        } else {
            body = .events(feed)
        }
    }

    /// What `item`, polled from a watch's feed, adds to the stream.
    /// - Parameter item: The feed's item.
    /// - Returns: The event's bytes, a wait, or the end (with an `error` event for an error the
    ///   API words).
    static func part(for item: WatchFeedItem) -> EventPart {
        switch item {
        case .event(let event): .write(ServerSentEvent.encode(event))
        case .waiting: .wait
        case .ended(let error): .end(last: (error as? PrefsError).map { ServerSentEvent.encode($0) })
        }
    }
}
