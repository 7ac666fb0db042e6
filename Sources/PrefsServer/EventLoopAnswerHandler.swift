import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes
import PrefsKit

/// Answers the daemon's busiest requests on the connection's event loop, before they reach
/// Hummingbird: plain reads, from the store's memory; watches, streamed from a store feed; and
/// plain writes (`PUT /v1/prefs/{key}[?scope=]`), submitted to the store's group commit and
/// answered from its completion.
///
/// Through the router a request crosses from the event loop to a task and back. For a read
/// served from memory those crossings are most of its cost (``CachedRead`` makes the router's
/// exact answer). A watch holds its task for as long as it lasts — Hummingbird's response writer,
/// the stream loop, their continuations: about 13 KiB, for 10 000 idle watchers 130 MiB. Here a
/// watch costs its subscription and a few fields.
///
/// A watch's answer is the route's: the same head, a `: watching` comment, each event as
/// ``ServerSentEvent`` encodes it, and a last `error` event if an error ends the watch. A watch
/// the store cannot open (a bad query, too many watches, a compacted `since`) goes to the router,
/// which words the error. The next event is read from the feed only while the connection can take
/// it; a client reading too slowly is ended with `overflow` by the store's bounded queue, as any
/// slow watcher is. The stream ends when the client goes or the store ends it (at shutdown, with
/// `shutdown`), and then so does the connection. With this handler in the pipeline the router
/// streams no watch, so a connection needs no ``DisconnectHandler``.
///
/// A write's answer is the router's too: the revision, or the error rendered as
/// ``ErrorMiddleware`` renders it; a body too large or not JSON goes to the router, which words
/// the error. While a write awaits its commit, what the client sends next waits (and nothing
/// more is read from the socket), as do events that would cut the answer off — the client
/// closing its side, the server starting to stop.
///
/// Answers keep their order: a read or write is answered only when no earlier request of the
/// connection is still with the router, and a watch behind such requests waits for their answers.
/// While the client takes no answers (the connection is not writable), nothing more is read from
/// it, so answers do not pile up in memory. Once the
/// server starts to stop, everything goes to the router, leaving the connection's end to it and
/// ``QuiesceGraceHandler``.
final class EventLoopAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the handler answers itself, once the request has been read whole.
    private enum Answer {
        case read(body: String, close: Bool)
        case watch
        case write(key: String, scope: ScopePath, close: Bool)
    }

    private let answering: EventLoopAnswering
    /// Requests passed on whose answers have not ended yet.
    private var passedOn = 0
    /// The request being read, and how the handler will answer it.
    private var held: (head: HTTPRequest, answer: Answer)?
    /// A watch read whole, to open once the router has answered the requests before it.
    private var waitingWatch: HTTPRequest?
    /// The watch being streamed. From a watch on, the connection carries nothing else.
    private var feed: (any WatchFeed)?
    private var stopping = false
    /// The body of a write being read.
    private var writeBody = ByteBuffer()
    /// Whether a write of this handler's awaits its commit. Meanwhile what arrives waits in
    /// `queued`, in order, and no more is read from the socket: requests, so that answers keep
    /// their order, and events (the client's input closing, the server starting to stop), so
    /// that they do not cut the answer off.
    private var writing = false
    private var queued: [Arrival] = []
    private var readHeld = false

    /// What arrived while a write awaited its commit.
    private enum Arrival {
        case part(HTTPRequestPart)
        case event(Any)
        case error(any Error)
    }

    /// A handler answering what `answering` says the service can answer at once.
    init(answering: EventLoopAnswering) {
        self.answering = answering
    }

    /// A handler answering what `service` can answer at once, within `limits`.
    convenience init(service: any PrefsService, limits: ServerLimits = ServerLimits()) {
        self.init(answering: EventLoopAnswering(service: service, limits: limits))
    }

    /// The handlers a new connection needs: this one, and, when the service cannot give its
    /// watches as feeds, a ``DisconnectHandler`` to end the router's watch streams through
    /// `endings`.
    static func handlers(answering: EventLoopAnswering, endings: WatchEndings) -> [any RemovableChannelHandler] {
        let handler = EventLoopAnswerHandler(answering: answering)
        return answering.watches == nil ? [handler, DisconnectHandler(endings: endings)] : [handler]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A client does not send another request on a connection that is to stream a watch; if
        // it does, the request is not answered (the connection closes when the stream ends).
        guard feed == nil, waitingWatch == nil else { return }
        guard !writing else { return queued.append(.part(unwrapInboundIn(data))) }
        switch unwrapInboundIn(data) {
        case .head(let request):
            if let answer = answer(to: request) {
                held = (request, answer)
                return
            }
            passedOn += 1
            context.fireChannelRead(data)
        case .body(var bytes):
            if case .write = held?.answer {
                writeBody.writeBuffer(&bytes)
                guard writeBody.readableBytes > answering.maximumWriteBytes else { return }
                // Too large: the router has it, and refuses it.
                passOn(held!.head, context: context)
                held = nil
                context.fireChannelRead(wrapInboundOut(.body(writeBody)))
                writeBody = ByteBuffer()
                return
            }
            if let request = held?.head {
                // A body, unusual for a GET: the router has the request after all.
                held = nil
                passOn(request, context: context)
            }
            context.fireChannelRead(data)
        case .end:
            guard let (request, answer) = held else { return context.fireChannelRead(data) }
            held = nil
            switch answer {
            case .read(let body, let close):
                send(body, close: close, context: context)
            case .watch where passedOn > 0:
                waitingWatch = request
            case .watch:
                stream(request, context: context)
            case .write(let key, let scope, let close):
                submitWrite(request, key: key, scope: scope, close: close, context: context)
            }
        }
    }

    func read(context: ChannelHandlerContext) {
        // Nothing more is read while a write awaits its commit, nor — short of a watch, whose
        // slow client the store's bounded queue ends — while the client is not taking answers.
        guard !writing, feed != nil || context.channel.isWritable else {
            readHeld = true
            return
        }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        passedOn -= 1
        context.write(data, promise: promise)
        if passedOn == 0, let request = waitingWatch {
            waitingWatch = nil
            stream(request, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            writeEvents(context: context)
            if readHeld, !writing {
                readHeld = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !writing else { return queued.append(.event(event)) }
        if event is ChannelShouldQuiesceEvent {
            stopping = true
            // The store ends the stream at shutdown, and the connection closes after it.
            if feed != nil { return }
        }
        if case .some(.inputClosed) = event as? ChannelEvent, let feed {
            // The client has gone: end its watch now, not at its next event.
            feed.end()
            return writeEvents(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        endFeed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !writing else { return queued.append(.error(error)) }
        // A request being read whose body breaks off (the decoder failed): the router has it and
        // the bytes so far, and answers the error its body then throws, as for any other request.
        if let request = held?.head {
            held = nil
            passOn(request, context: context)
            if writeBody.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(writeBody))) }
            writeBody = ByteBuffer()
        }
        context.fireErrorCaught(error)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        endFeed()
    }

    /// How the handler answers `request` itself, or nil to pass it on.
    private func answer(to request: HTTPRequest) -> Answer? {
        guard !stopping else { return nil }
        if answering.writes != nil, request.method == .put, passedOn == 0, let path = request.path,
            let length = request.headerFields[.contentLength].flatMap(Int.init), length <= answering.maximumWriteBytes,
            request.headerFields[.transferEncoding] == nil, request.headerFields[.expect] == nil,
            let (key, scope, close) = CachedRead.plainTarget(
                path, connection: ConnectionOptions(request.headerFields[values: .connection]))
        {
            writeBody.clear()
            return .write(key: key, scope: scope, close: close)
        }
        if answering.watches != nil, request.method == .get, let path = request.path, path == "/v1/watch" || path.hasPrefix("/v1/watch?"),
            !request.hasBody
        {
            return .watch
        }
        guard passedOn == 0, let reads = answering.reads, let (body, close) = reads.answer(to: request) else { return nil }
        return .read(body: body, close: close)
    }

    private func passOn(_ request: HTTPRequest, context: ChannelHandlerContext) {
        passedOn += 1
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    private func send(_ body: String, close: Bool, context: ChannelHandlerContext) {
        send(context.channel.allocator.buffer(string: body), status: .ok, close: close, context: context)
    }

    /// Sends a JSON answer as the router would.
    private func send(_ bytes: ByteBuffer, status: HTTPResponse.Status, close: Bool, context: ChannelHandlerContext) {
        let fields = AnswerHeaders.json(bodyLength: bytes.readableBytes, close: close)
        let head = HTTPResponse(status: status, headerFields: HTTPFields(fields))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(bytes)), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close { closeAfter(written, context: context) }
    }

    /// Opens the watch `request` asks for and starts its answer; if the store cannot open it,
    /// passes the request on whole.
    private func stream(_ request: HTTPRequest, context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        do {
            let watch = try WatchRoute.parse(Request(head: request, body: RequestBody(buffer: ByteBuffer())))
            feed = try answering.watches?.openWatchFeed(watch) {
                bound.eventLoop.execute { bound.value.handler.writeEvents(context: bound.value.context) }
            }
        } catch {}
        guard feed != nil else {
            passOn(request, context: context)
            return context.fireChannelRead(wrapInboundOut(.end(nil)))
        }
        let head = HTTPResponse(status: .ok, headerFields: HTTPFields(AnswerHeaders.eventStream()))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: ": watching\n\n"))), promise: nil)
        writeEvents(context: context)
        context.flush()
        RequestDecoderRemoval.removeDecoder(from: context)
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
                return closeAfter(context.writeAndFlush(wrapOutboundOut(.end(nil))), context: context)
            }
        }
    }

    private func closeAfter(_ written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    private func endFeed() {
        feed?.end()
        feed = nil
    }
}

// MARK: - Writes

extension EventLoopAnswerHandler {
    /// Submits the plain write `request` asks for; its answer follows once it has committed. A
    /// body that is not JSON goes to the router, which words the error.
    fileprivate func submitWrite(
        _ request: HTTPRequest, key: String, scope: ScopePath, close: Bool, context: ChannelHandlerContext
    ) {
        let body = writeBody
        writeBody = ByteBuffer()
        guard let writes = answering.writes, let value = try? JSONValue(parsing: body.readableBytesView) else {
            passOn(request, context: context)
            context.fireChannelRead(wrapInboundOut(.body(body)))
            return context.fireChannelRead(wrapInboundOut(.end(nil)))
        }
        writing = true
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        writes.submit(key, to: value, scope: scope, target: request.path ?? "", on: context.eventLoop) { status, body in
            bound.value.handler.answerWrite(status: status, body: body, close: close, context: bound.value.context)
        }
    }

    /// Answers a committed (or failed) write, then takes up what waited.
    fileprivate func answerWrite(status: HTTPResponse.Status, body: ByteBuffer, close: Bool, context: ChannelHandlerContext) {
        writing = false
        send(body, status: status, close: close, context: context)
        // After `Connection: close`, nothing more is answered: the connection is closing.
        if close { queued.removeAll { if case .part = $0 { true } else { false } } }
        while !writing, !queued.isEmpty {
            switch queued.removeFirst() {
            case .part(let part): channelRead(context: context, data: NIOAny(part))
            case .event(let event): userInboundEventTriggered(context: context, event: event)
            case .error(let error): errorCaught(context: context, error: error)
            }
        }
        if readHeld, !writing {
            readHeld = false
            context.read()
        }
    }
}
