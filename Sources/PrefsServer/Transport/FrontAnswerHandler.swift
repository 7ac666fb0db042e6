import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// The API on the raw bytes of a connection, before NIO's HTTP decoder: for requests in the plain
/// form (``PlainHead``) with a small body, as nearly all of an app's or `prefsctl`'s are, a request
/// costs its two system calls and the work itself — no HTTP decoding, conversion of parts, or
/// encoding. It is framing and connection handling only: each request goes to
/// ``API``, which answers it by the endpoint's one definition, and the ``Delivery`` is written
/// as bytes (``AnswerEncoding``), the same bytes the general path writes for it.
///
/// The first request of another shape — chunked, with `Expect`, HTTP/1.0, a body larger than
/// ``maximumBodyBytes``, an upload the endpoint streams — and everything after it goes on to the
/// general HTTP/1 path untouched (NIO's decoder, ``DecodedAnswerHandler``): the handler steps
/// aside for the rest of the connection, so it never has to order its answers against that
/// path's. It steps aside as well once the server starts to stop.
///
/// Answers keep their order: while one is pending (a write awaiting its commit, a task, a file
/// being sent), what the client sends next waits, and so do events that would cut the answer off
/// (the client closing its side, the server starting to stop). Reading goes on meanwhile until
/// ``maximumPendingBytes`` wait: a client waiting for its answer sends nothing, and NIO would
/// switch the socket's read interest off and on again around every write (two `epoll_ctl` calls a
/// write). A client that sends requests faster than it takes their answers is not answered into
/// memory without bound: while the connection cannot take more, the handler holds what it has
/// received and reads no more from the socket. A watch makes the connection its own: its events
/// are written as the feed has them, and whatever else the client sends is dropped.
///
/// Until it steps aside it also drives the connection's reads (autoRead off): NIO's own read after
/// every read from the socket passes through every handler of the pipeline, which costs a plain
/// request more than its parsing; from the front it costs one call. It also keeps the count of
/// the connections on its event loop that send requests (``EventLoopOccupancy``).
///
/// What it takes, holds and answers is kept in a ``StateMachine``; the handler performs the
/// actions it returns, and answers through ``API``.
final class FrontAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Any

    /// A request head longer than this is never plain.
    static let maximumHeadBytes = 4096
    /// While an answer is pending, reading stops once this much has arrived after it.
    static let maximumPendingBytes = 65536

    private let api: API
    private let occupancy: EventLoopOccupancy
    /// What is taken, held and answered; this handler performs what it says.
    private var state: StateMachine
    /// The last answer written to a `GET` or `POST` that kept the connection open, to write again
    /// as it is.
    private var lastWritten: WrittenAnswer?
    /// Whether the connection counts in ``occupancy``: from when the handler is added until the
    /// connection closes or watches.
    private var countedInOccupancy = false
    /// Told, once, whether the handler steps aside (true: run before it passes anything on, to
    /// put behind it the handlers that take what it passes, the general path,
    /// ``ConnectionSetupHandler``; the connection closes if it throws) or the
    /// connection closed first (false); nil where those handlers are there from the start. The
    /// handler lets go of it once told, as it holds the connection and this handler.
    var stepsAside: ((_ steppedAside: Bool) throws -> Void)?

    /// Answers what `api` answers, taking requests by `methods` (the methods of `api`'s endpoints,
    /// worked out once per server) with bodies up to `maximumBodyBytes`, counting connections per
    /// loop in `occupancy`.
    init(api: API, methods: PlainMethods, occupancy: EventLoopOccupancy, maximumBodyBytes: Int) {
        self.api = api
        self.occupancy = occupancy
        state = StateMachine(maximumBodyBytes: maximumBodyBytes, methods: methods)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        occupancy.connectionOpened(on: context.eventLoop)
        countedInOccupancy = true
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        read(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch state.readComplete() {
        case .forward: context.fireChannelReadComplete()
        case .read: read(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leaveOccupancy(context: context)
        state.connectionGone()?.end()
        try? reportStepAside(false)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state.received(unwrapInboundIn(data)) {
        case .forward: context.fireChannelRead(data)
        case .answer: answerPending(context: context)
        case .drop, .wait: break
        }
    }

    func read(context: ChannelHandlerContext) {
        if state.read(writable: context.channel.isWritable) == .read { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            switch state.writable() {
            case .writeEvents:
                writeEvents(context: context)
            case .answerPending:
                answerPending(context: context)
                resumeReading(context: context)
            case .none:
                break
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let isInputClosed = if case .some(.inputClosed) = event as? ChannelEvent { true } else { false }
        switch state.eventTriggered(event, isInputClosed: isInputClosed, isQuiesce: event is ChannelShouldQuiesceEvent) {
        case .forward:
            context.fireUserInboundEventTriggered(event)
        case .none:
            break
        case .close(let feed):
            feed?.end()
            context.close(promise: nil)
        case .stepAsideAndForward(let bytes):
            stepAside(passing: bytes, context: context)
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.connectionGone()?.end()
        try? reportStepAside(false)
        context.fireChannelInactive()
    }

    // MARK: Requests

    /// Answers the plain requests among the pending bytes while the connection takes answers,
    /// up to one whose answer must wait.
    private func answerPending(context: ChannelHandlerContext) {
        var wrote = false
        defer { if wrote { context.flush() } }
        while true {
            let head: PlainHead
            let body: ByteBuffer?
            switch state.nextRequest(writable: context.channel.isWritable) {
            case .none:
                return
            case .stepAside(let bytes):
                return stepAside(passing: bytes, context: context)
            case .request(let parsed, let bytes):
                (head, body) = (parsed, bytes)
            }
            var request = EndpointRequest(method: head.method, target: head.target, headers: head.fields)
            request.connection = ObjectIdentifier(context.channel)
            let delivery: Delivery
            switch api.prepare(&request, body: body ?? ByteBuffer()) {
            case .answer(let answer):
                delivery = .answer(answer)
            case .endpoint(let endpoint):
                switch endpoint.body {
                case .streamed:
                    return stepAside(passing: state.stepAside(), context: context)
                case .whole(let limit) where head.bodyLength > limit:
                    // Refused by the decoder's path, which words it and drains the body.
                    return stepAside(passing: state.stepAside(), context: context)
                case .whole:
                    request.body = body
                case .none:
                    break
                }
                // Why a lone connection's write may commit on this loop: ``EventLoopOccupancy``.
                request.commitsHere = occupancy.isAlone(on: context.eventLoop)
                delivery = api.deliver(request, to: endpoint)
            }
            state.requestTaken(head)
            let answer: AnswerDelivery
            switch delivery {
            case .answer(let ready):
                answer = AnswerDelivery(ready, method: head.method)
            case .events(let feed):
                answer = AnswerDelivery(events: feed, method: head.method)
            case .pending(let begin):
                if wrote {
                    context.flush()
                    wrote = false
                }
                awaitAnswer(begin, for: head, context: context)
                continue
            }
            // A whole answer, the common case, is written without a flush of its own.
            wrote = true
            guard deliver(answer, for: head, context: context) else { continue }
            if head.connection.close || answer.closes { return closeAfterAnswers(context: context) }
        }
    }

    /// Awaits a pending answer: what follows waits for it (``StateMachine/answerStarted(starting:)``).
    private func awaitAnswer(
        _ begin: @Sendable (_ deliver: @escaping @Sendable (Answer) -> Void) -> Void, for head: PlainHead,
        context: ChannelHandlerContext
    ) {
        state.answerStarted(starting: true)
        defer { state.answerStartReturned() }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        begin { answer in
            if bound.eventLoop.inEventLoop {
                bound.value.handler.answered(answer, for: head, context: bound.value.context)
            } else {
                bound.eventLoop.execute { bound.value.handler.answered(answer, for: head, context: bound.value.context) }
            }
        }
    }

    /// Sends a pending answer, then takes up what waited for it.
    private func answered(_ answer: Answer, for head: PlainHead, context: ChannelHandlerContext) {
        guard case .send(let takeUpWaiting) = state.answerFinished() else {
            // The connection has gone: a watch that opened meanwhile ends unseen.
            if case .events(let feed) = answer.body { feed.end() }
            return
        }
        let delivery = AnswerDelivery(answer, method: head.method)
        guard deliver(delivery, for: head, context: context) else { return }
        context.flush()
        if head.connection.close || delivery.closes { return closeAfterAnswers(context: context) }
        // Answered at once: the loop that started it goes on by itself.
        if takeUpWaiting { self.takeUpWaiting(context: context) }
    }

    /// After an answer: the requests and events that waited for it.
    private func takeUpWaiting(context: ChannelHandlerContext) {
        answerPending(context: context)
        guard let events = state.takeHeldEvents() else { return }
        for event in events { userInboundEventTriggered(context: context, event: event) }
        resumeReading(context: context)
    }

    /// Writes `delivery` to the request `head`: its head, and a whole body at once (not flushed);
    /// a file then goes on as the engine reads it, a watch as its feed has events.
    /// - Returns: Whether the answer is written whole.
    private func deliver(_ delivery: AnswerDelivery, for head: PlainHead, context: ChannelHandlerContext) -> Bool {
        let allocator = context.channel.allocator
        if case .whole(let body) = delivery.body, head.method == .get || head.method == .post, !head.connection.close {
            if lastWritten?.answers(delivery, body: body) != true {
                lastWritten = WrittenAnswer(delivery, body: body, allocator: allocator)
            }
            context.write(NIOAny(lastWritten!.bytes), promise: nil)
            return true
        }
        let bytes = AnswerEncoding.encoded(delivery, close: head.connection.close, allocator: allocator)
        switch delivery.body {
        case .none, .whole:
            context.write(NIOAny(bytes), promise: nil)
            return true
        case .file(let chunks):
            context.writeAndFlush(NIOAny(bytes), promise: nil)
            stream(chunks, for: head, context: context)
            return false
        case .events(let feed):
            context.write(NIOAny(bytes), promise: nil)
            watch(feed, context: context)
            return false
        }
    }

    /// Sends a file as the engine reads it, a chunk at a time, each once the one before is
    /// written: the connection's buffer holds one chunk, not the file.
    private func stream(_ chunks: AsyncThrowingStream<Data, any Error>, for head: PlainHead, context: ChannelHandlerContext) {
        state.answerStarted(starting: false)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        Task {
            do {
                for try await chunk in chunks {
                    try await loop.flatSubmit { () -> EventLoopFuture<Void> in
                        let context = bound.value.context
                        return context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: chunk)))
                    }.get()
                }
                loop.execute { bound.value.handler.finishedStream(for: head, context: bound.value.context) }
            } catch {
                // The head is out: all that is left to say is that the body ends short.
                loop.execute { bound.value.context.close(promise: nil) }
            }
        }
    }

    /// A file is sent: take up what waited.
    private func finishedStream(for head: PlainHead, context: ChannelHandlerContext) {
        guard case .send = state.answerFinished() else { return }
        if head.connection.close { return closeAfterAnswers(context: context) }
        takeUpWaiting(context: context)
    }

    // MARK: Watches

    /// Streams a watch whose head and opening are written: its events as the feed has them.
    private func watch(_ feed: any WatchFeed, context: ChannelHandlerContext) {
        state.watchStarted(feed)
        leaveOccupancy(context: context)
        // The connection reads no more requests: the decoder behind would keep its parser and
        // buffers for as long as the watch lasts.
        RequestDecoderRemoval.removeDecoder(from: context)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        feed.wakeWhenReady {
            bound.eventLoop.execute { bound.value.handler.writeEvents(context: bound.value.context) }
        }
        writeEvents(context: context)
        context.flush()
    }

    /// Writes the feed's waiting events while the connection takes them; at the feed's end,
    /// ends the answer and the connection.
    private func writeEvents(context: ChannelHandlerContext) {
        guard let feed = state.feed else { return }
        let allocator = context.channel.allocator
        var wrote = false
        defer { if wrote { context.flush() } }
        while context.channel.isWritable {
            switch AnswerDelivery.part(for: feed.poll()) {
            case .write(let bytes):
                context.write(NIOAny(AnswerEncoding.chunk(bytes, allocator: allocator)), promise: nil)
                wrote = true
            case .wait:
                return
            case .end(let last):
                state.watchEnded()
                if let last { context.write(NIOAny(AnswerEncoding.chunk(last, allocator: allocator)), promise: nil) }
                // A watch's client sends nothing more on its connection: close it whole once the
                // end is written, without waiting for the client to close its side.
                wrote = false
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(NIOAny(allocator.buffer(string: AnswerEncoding.lastChunk)))
                    .whenComplete { _ in loopBound.value.close(promise: nil) }
                return
            }
        }
    }

    // MARK: The connection

    /// Closes the connection once what is written has gone: its sending side first, and the rest
    /// once the client closes its own — closing at once would reset the connection if the client's
    /// bytes are still unread, and the last answer could be lost with them.
    private func closeAfterAnswers(context: ChannelHandlerContext) {
        let resume = state.closeAfterAnswers()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            loopBound.value.close(mode: .output).whenFailure { _ in loopBound.value.close(promise: nil) }
        }
        if resume == .read { context.read() }
    }

    /// The connection sends no more requests (it closed, or watches): it stops counting in
    /// ``occupancy``, once.
    private func leaveOccupancy(context: ChannelHandlerContext) {
        guard countedInOccupancy else { return }
        countedInOccupancy = false
        occupancy.connectionLeft(on: context.eventLoop)
    }

    private func resumeReading(context: ChannelHandlerContext) {
        if state.resumeReading() == .read { context.read() }
    }

    /// Hands the connection to the decoder (the state has stepped aside), passing it `bytes`.
    private func stepAside(passing bytes: ByteBuffer?, context: ChannelHandlerContext) {
        // The general path's handlers are put behind this one, to take what is passed on.
        do {
            try reportStepAside(true)
        } catch {
            return context.close(promise: nil)
        }
        // NIO reads again after every read from now on, as the handlers behind expect.
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        if let bytes, bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
        resumeReading(context: context)
    }

    /// Tells ``stepsAside``, once, whether the handler stepped aside, and lets go of it.
    private func reportStepAside(_ steppedAside: Bool) throws {
        let report = stepsAside
        stepsAside = nil
        try report?(steppedAside)
    }
}
