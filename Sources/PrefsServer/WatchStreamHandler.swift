import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes
import PrefsKit

/// Answers `GET /v1/watch` on the connection's event loop: the store's feed pushes, this handler
/// writes each event to the connection as it comes — no task per watch.
///
/// Through the router a watch holds an async task (Hummingbird's response writer, the stream
/// loop, its continuations) for as long as it lasts: about 13 KiB, for 10 000 idle watchers
/// 130 MiB. Here a watch costs its subscription and this handler's few fields.
///
/// The answer is the route's: the same head, a `: watching` comment, then each event as
/// ``ServerSentEvent`` encodes it, and a last `error` event if an error ends the watch. A watch
/// the store cannot open (a bad query, too many watches, a compacted `since`) goes to the router,
/// which words the error. The handler reads the next event only while the connection can take
/// it; when the client reads too slowly the store's bounded queue ends the watch with `overflow`,
/// as it does any slow watcher. The stream ends when the client goes or the store ends it (at
/// shutdown, `shutdown`), and then so does the connection.
///
/// Like ``CachedReadHandler`` it takes a request only when no earlier request of the connection
/// is still with the router, and none once the server has started to stop.
final class WatchStreamHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let service: any FeedWatching
    /// Requests passed on whose answers have not ended yet.
    private var passedOn = 0
    /// A watch request being read, to open once it has been read whole.
    private var held: HTTPRequest?
    /// The watch being streamed; from then on the connection carries nothing else.
    private var feed: (any WatchFeed)?
    private var stopping = false
    private var date = HTTPDate()

    init(service: any FeedWatching) {
        self.service = service
    }

    /// A handler for a new connection when `service` can give its watches as feeds (the
    /// embedded store); none otherwise.
    static func handlers(for service: any PrefsService) -> [any RemovableChannelHandler] {
        guard let service = service as? any FeedWatching else { return [] }
        return [WatchStreamHandler(service: service)]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A client does not send another request on a connection streaming its answer; if it
        // does, the request is not answered (the connection closes when the stream ends).
        guard feed == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let request):
            if passedOn == 0, !stopping, Self.isWatch(request) {
                held = request
                return
            }
            passedOn += 1
            context.fireChannelRead(data)
        case .body:
            if let request = held {
                // A watch with a body: unusual, so the router has it after all.
                held = nil
                passOn(request, context: context)
            }
            context.fireChannelRead(data)
        case .end:
            guard let request = held else { return context.fireChannelRead(data) }
            held = nil
            if !startStreaming(request, context: context) {
                passOn(request, context: context)
                context.fireChannelRead(data)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { passedOn -= 1 }
        context.write(data, promise: promise)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { writeEvents(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            stopping = true
            // The store ends the stream at shutdown; the connection closes after it.
            if feed != nil { return }
        }
        if case .some(.inputClosed) = event as? ChannelEvent, let feed {
            // The client has gone: end the watch now, not at its next event.
            feed.end()
            return writeEvents(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        endFeed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        endFeed()
    }

    /// Whether `request` is a plain `GET /v1/watch`, with no body.
    private static func isWatch(_ request: HTTPRequest) -> Bool {
        guard request.method == .get, let path = request.path, path.hasPrefix("/v1/watch"),
            request.headerFields[.contentLength] == nil, request.headerFields[.transferEncoding] == nil
        else { return false }
        let rest = path.utf8.dropFirst("/v1/watch".utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "?")
    }

    private func passOn(_ request: HTTPRequest, context: ChannelHandlerContext) {
        passedOn += 1
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    /// Opens the watch and sends the answer's head; false if the store cannot open it.
    private func startStreaming(_ request: HTTPRequest, context: ChannelHandlerContext) -> Bool {
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: eventLoop)
        let feed: any WatchFeed
        do {
            let watch = try WatchRoute.parse(Request(head: request, body: RequestBody(buffer: ByteBuffer())))
            feed = try service.openWatchFeed(watch) {
                eventLoop.execute { bound.value.handler.writeEvents(context: bound.value.context) }
            }
        } catch {
            return false
        }
        self.feed = feed
        var head = HTTPResponse(status: .ok, headerFields: [.contentType: "text/event-stream", .cacheControl: "no-cache"])
        date.stamp(&head)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: ": watching\n\n"))), promise: nil)
        writeEvents(context: context)
        context.flush()
        return true
    }

    /// Writes the feed's waiting events while the connection takes them; at the feed's end,
    /// ends the answer and the connection.
    private func writeEvents(context: ChannelHandlerContext) {
        guard let feed else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        while context.channel.isWritable {
            switch feed.poll() {
            case .event(let event):
                context.write(wrapOutboundOut(.body(ByteBuffer(bytes: ServerSentEvent.encode(event)))), promise: nil)
                wrote = true
            case .waiting:
                return
            case .ended(let error):
                self.feed = nil
                if let error = error as? PrefsError {
                    context.write(wrapOutboundOut(.body(ByteBuffer(bytes: ServerSentEvent.encode(error)))), promise: nil)
                }
                wrote = false
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
                return
            }
        }
    }

    private func endFeed() {
        feed?.end()
        feed = nil
    }
}
