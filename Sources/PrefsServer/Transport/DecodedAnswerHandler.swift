import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import PrefsEngine
import PrefsKit

/// The general HTTP/1 path: the API on requests NIO's decoder has parsed — everything the
/// raw-bytes path (``FrontAnswerHandler``) does not take, once it has stepped aside. It is the
/// connection's last handler, behind NIO's decoder and encoder, the HTTP/1 rules
/// (``HTTP1ConnectionHandler``) and the grace at shutdown (``QuiesceGraceHandler``). Each request
/// becomes an ``EndpointRequest`` that ``API`` answers by the endpoint's one definition, and the
/// ``Delivery`` is written as response parts: the head and body the raw-bytes path writes for the
/// same answer (``AnswerDelivery``, ``HTTPResponseHead/init(status:fields:contentLength:)``).
///
/// One request is answered at a time, in order: the parts of the next wait, and the socket is not
/// read, until the answer before has ended. A body is read as the endpoint says: not at all (its
/// bytes are dropped), whole up to the endpoint's limit (a larger one is `too_large`, the rest
/// dropped), or streamed to an upload as it arrives (``UploadBody``). A body NIO cannot frame
/// fails its reader — 400 `invalid_request` — and the connection closes after the answer. A file
/// is sent a chunk at a time, each once the one before is written; a watch's events as its feed
/// has them while the connection takes them, until the feed ends or the client goes, and then the
/// connection closes. A request that does not persist (its head says `Connection: close`, as
/// ``HTTP1ConnectionHandler`` makes it) closes the connection after its answer; once no answer is
/// due, it closes if the client has closed its side or the server is stopping.
final class DecodedAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What becomes of the body of the request being read.
    private enum Body {
        /// Dropped: the endpoint takes none, or the request is answered already.
        case dropped
        /// Read whole for `endpoint`, up to `limit` bytes, then answered.
        case collected(EndpointRequest, Endpoint, ByteBuffer, limit: Int)
        /// Streamed to an upload.
        case streamed(UploadBody.Producer.Source)
    }

    private let api: API
    /// The body of the request being read, from its head to its end; nil between requests.
    private var body: Body?
    /// The method of the request being answered, from its head until its answer ends; nil when
    /// none is.
    private var answering: HTTPRequest.Method?
    /// Whether the request being answered does not persist: its head says `Connection: close`
    /// (``HTTP1ConnectionHandler`` says so exactly), and the connection closes after its answer.
    private var closesAfterAnswer = false
    /// The watch being streamed.
    private var feed: (any WatchFeed)?
    /// Request parts that came while one was being answered, in order.
    private var waiting = CircularBuffer<HTTPServerRequestPart>()
    /// Whether an upload's reader has enough unread: the socket is not read until it asks again.
    private var uploadFull = false
    /// Whether a read from the socket is held back (``waiting`` or ``uploadFull``).
    private var readHeld = false
    /// Whether the connection closes once no answer is due: the client has closed its side, or
    /// the server is stopping.
    private var closesWhenIdle = false
    /// The write of the last answer's end, which closing waits for.
    private var lastEnd: EventLoopFuture<Void>?
    /// Whether the client has closed its sending side.
    private var inputClosed = false

    /// Answers what `api` answers.
    init(api: API) {
        self.api = api
    }

    /// Whether a request is being read or answered, or waits.
    private var isIdle: Bool { body == nil && answering == nil && waiting.isEmpty }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        // A part of the request being read goes on; a new request waits for the answer before.
        guard waiting.isEmpty, body != nil || answering == nil else { return waiting.append(part) }
        take(part, context: context)
    }

    func read(context: ChannelHandlerContext) {
        guard waiting.isEmpty, !uploadFull else {
            readHeld = true
            return
        }
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // What HTTP1ConnectionHandler passes on of NIO's errors: a body it cannot frame.
        guard error is HTTPParserError else {
            feed?.end()
            return context.close(promise: nil)
        }
        // Nothing after it can be framed: no part of the request comes any more, and the
        // connection closes after the answer — at once if it is written already.
        let answered = answering == nil
        closesAfterAnswer = true
        endBody(failing: error, answer: API.prefsError(for: error), context: context)
        if answered {
            closesWhenIdle = true
            closeIfIdle(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let isInputClosed = if case .some(.inputClosed) = event as? ChannelEvent { true } else { false }
        guard isInputClosed || event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        if isInputClosed { inputClosed = true }
        if let feed {
            // The client has gone: its watch ends now. (At shutdown, the engine ends watches, and
            // the connection closes after the last event.)
            guard isInputClosed else { return }
            feed.end()
            return context.close(promise: nil)
        }
        if isInputClosed, waiting.isEmpty, body != nil { endBodyCut(context: context) }
        closesWhenIdle = true
        closeIfIdle(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, feed != nil { writeEvents(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        feed?.end()
        feed = nil
        if case .streamed(let source) = body { source.finish(ChannelError.ioOnClosedChannel) }
        body = nil
        waiting.removeAll()
        context.fireChannelInactive()
    }

    // MARK: Requests

    private func take(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            start(head, context: context)
        case .body(let bytes):
            received(bytes, context: context)
        case .end:
            let read = body
            body = nil
            switch read {
            case .collected(var request, let endpoint, let bytes, _):
                request.body = bytes
                answer(api.deliver(request, to: endpoint), context: context)
            case .streamed(let source):
                source.finish()
            case .dropped, nil:
                break
            }
            if answering == nil { takeUpWaiting(context: context) }
        }
    }

    /// A request's head: what ``API`` makes of it, and how its body is read.
    private func start(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        body = .dropped
        closesAfterAnswer = ConnectionOptions(head.headers["connection"]).close
        // As the HTTP types see it: the path of an absolute-form target, no connection fields.
        guard let converted = try? HTTPRequest(head, secure: false, splitCookie: false) else {
            answering = .get
            return answer(.answer(.error(PrefsError(.invalidRequest, "The request's method or fields are not valid HTTP."))), context: context)
        }
        answering = converted.method
        var request = EndpointRequest(
            method: converted.method, target: converted.path ?? "/", headers: RequestHeaders(Array(converted.headerFields)))
        request.connection = ObjectIdentifier(context.channel)
        switch api.prepare(&request) {
        case .answer(let answer):
            self.answer(.answer(answer), context: context)
        case .endpoint(let endpoint):
            switch endpoint.body {
            case .none:
                answer(api.deliver(request, to: endpoint), context: context)
            case .whole(let limit):
                body = .collected(request, endpoint, context.channel.allocator.buffer(capacity: 0), limit: limit)
            case .streamed:
                let upload = uploadBody(context: context)
                body = .streamed(upload.source)
                request.bodyStream = upload.stream
                answer(api.deliver(request, to: endpoint), context: context)
            }
        }
    }

    /// A part of the body of the request being read.
    private func received(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        switch body {
        case .collected(let request, let endpoint, var collected, let limit):
            body = .dropped  // so that appending does not copy
            guard collected.readableBytes + bytes.readableBytes <= limit else {
                return answer(.answer(.error(API.bodyTooLarge(limit: limit))), context: context)
            }
            collected.writeImmutableBuffer(bytes)
            body = .collected(request, endpoint, collected, limit: limit)
        case .streamed(let source):
            if case .stopProducing = source.yield(bytes) { uploadFull = true }
        case .dropped, nil:
            break
        }
    }

    /// The client closed its side before the body of the request being read ended: the body
    /// fails (what reads it — an upload, a sync stream — ends, and its endpoint answers), one read
    /// whole is answered `invalid_request`, and the connection closes after the answer.
    private func endBodyCut(context: ChannelHandlerContext) {
        closesAfterAnswer = true
        let cut = PrefsError(.invalidRequest, "The connection's input closed before the request's body ended.")
        endBody(failing: cut, answer: cut, context: context)
    }

    /// No part of the request being read comes any more: a streamed body fails with `error`, a
    /// body read whole is answered `refusal`, and one being dropped is done with. (Left
    /// `dropped`, a body that never ends would keep the connection from being idle, and from
    /// closing, for ever.)
    private func endBody(failing error: any Error, answer refusal: PrefsError, context: ChannelHandlerContext) {
        let read = body
        body = nil
        switch read {
        case .collected:
            answer(.answer(.error(refusal)), context: context)
        case .streamed(let source):
            source.finish(error)
        case .dropped, nil:
            break
        }
    }

    /// A body that tells this handler, on its event loop, when its reader wants more, and when it
    /// has stopped reading.
    private func uploadBody(context: ChannelHandlerContext) -> UploadBody {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let resume: @Sendable () -> Void = {
            bound.eventLoop.execute {
                bound.value.handler.uploadFull = false
                bound.value.handler.resumeReading(context: bound.value.context)
            }
        }
        return UploadBody(demand: UploadBody.Demand(wanted: resume, ended: resume))
    }

    /// Takes up the parts that waited, while no answer holds them back.
    private func takeUpWaiting(context: ChannelHandlerContext) {
        while body != nil || answering == nil, let part = waiting.popFirst() {
            take(part, context: context)
        }
        if inputClosed, waiting.isEmpty, body != nil { endBodyCut(context: context) }
        resumeReading(context: context)
        closeIfIdle(context: context)
    }

    private func resumeReading(context: ChannelHandlerContext) {
        guard readHeld, waiting.isEmpty, !uploadFull else { return }
        readHeld = false
        context.read()
    }

    /// Closes the connection once its last answer is written, if it is to close when idle.
    private func closeIfIdle(context: ChannelHandlerContext) {
        guard closesWhenIdle, isIdle else { return }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard let lastEnd else { return context.close(promise: nil) }
        lastEnd.whenComplete { _ in bound.value.close(promise: nil) }
    }

    // MARK: Answers

    /// Sends what `delivery` says, now or once it is ready.
    private func answer(_ delivery: Delivery, context: ChannelHandlerContext) {
        guard let method = answering else { return }
        switch delivery {
        case .answer(let answer):
            write(AnswerDelivery(answer, method: method), context: context)
        case .events(let feed):
            write(AnswerDelivery(events: feed, method: method), context: context)
        case .pending(let start):
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            start { answer in
                let delivery = AnswerDelivery(answer, method: method)
                if bound.eventLoop.inEventLoop {
                    bound.value.handler.write(delivery, context: bound.value.context)
                } else {
                    bound.eventLoop.execute { bound.value.handler.write(delivery, context: bound.value.context) }
                }
            }
        }
    }

    /// Writes `delivery`: its head, and a whole body at once; a file then goes on as the engine
    /// reads it, a watch as its feed has events.
    private func write(_ delivery: AnswerDelivery, context: ChannelHandlerContext) {
        let head = HTTPResponseHead(status: delivery.status, fields: delivery.fields, contentLength: delivery.contentLength)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        switch delivery.body {
        case .none:
            endAnswer(context: context)
        case .whole(let bytes):
            context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
            endAnswer(context: context)
        case .file(let chunks):
            context.flush()
            stream(chunks, context: context)
        case .events(let feed):
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: ServerSentEvent.opening)))), promise: nil)
            watch(feed, context: context)
        }
    }

    /// Ends the answer being written, then takes up what waited.
    private func endAnswer(context: ChannelHandlerContext) {
        answering = nil
        let end = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        lastEnd = end
        guard !closesAfterAnswer else {
            // Nothing more is answered: the sending side closes once the answer is written, and
            // the rest once the client closes its own (closing at once would reset the connection
            // if the client's bytes are still unread, and the answer could be lost with them) —
            // at once if it has. A body still coming is no longer read for anyone.
            waiting.removeAll()
            body = nil
            let (bound, whole) = (NIOLoopBound(context, eventLoop: context.eventLoop), inputClosed)
            end.whenComplete { _ in
                if whole { return bound.value.close(promise: nil) }
                bound.value.close(mode: .output).whenFailure { _ in bound.value.close(promise: nil) }
            }
            return
        }
        if body == nil { takeUpWaiting(context: context) }
    }

    /// Sends a file as the engine reads it, a chunk at a time, each once the one before is
    /// written: the connection's buffer holds one chunk, not the file.
    private func stream(_ chunks: AsyncThrowingStream<Data, any Error>, context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        Task {
            do {
                for try await chunk in chunks {
                    try await loop.flatSubmit { () -> EventLoopFuture<Void> in
                        let (handler, context) = bound.value
                        let bytes = context.channel.allocator.buffer(bytes: chunk)
                        return context.writeAndFlush(handler.wrapOutboundOut(.body(.byteBuffer(bytes))))
                    }.get()
                }
                loop.execute { bound.value.handler.endAnswer(context: bound.value.context) }
            } catch {
                // The head is out: all that is left to say is that the body ends short.
                loop.execute { bound.value.context.close(promise: nil) }
            }
        }
    }

    // MARK: Watches

    /// Streams a watch whose head and opening are written: its events as the feed has them.
    private func watch(_ feed: any WatchFeed, context: ChannelHandlerContext) {
        // A watch that opened once the engine had read the log (a pending answer) may find the
        // connection gone: it ends unseen.
        guard context.channel.isActive else { return feed.end() }
        self.feed = feed
        // The connection reads no more requests: the decoder would keep its parser and buffers
        // for as long as the watch lasts.
        RequestDecoderRemoval.removeDecoder(from: context)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        feed.wakeWhenReady {
            bound.eventLoop.execute { bound.value.handler.writeEvents(context: bound.value.context) }
        }
        writeEvents(context: context)
        context.flush()
    }

    /// Writes the feed's waiting events while the connection takes them; at the feed's end, ends
    /// the answer and closes the connection.
    private func writeEvents(context: ChannelHandlerContext) {
        guard let feed else { return }
        var wrote = false
        defer { if wrote { context.flush() } }
        while context.channel.isWritable {
            switch AnswerDelivery.part(for: feed.poll()) {
            case .write(let bytes):
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
                wrote = true
            case .wait:
                return
            case .end(let last):
                self.feed = nil
                answering = nil
                if let last { context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: last)))), promise: nil) }
                // A watch's client sends nothing more on its connection: close it whole once the
                // end is written.
                wrote = false
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
                return
            }
        }
    }
}
