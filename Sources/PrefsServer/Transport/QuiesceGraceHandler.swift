import NIOCore
import NIOHTTP1

/// Keeps an idle keep-alive connection open for a moment when the server starts to stop,
/// instead of closing it at once.
///
/// Closing a connection the moment shutdown begins resets any request its client sent in that
/// same instant — sent, never answered, and the client cannot tell whether it was applied. With
/// this handler in front of the general path's (``DecodedAnswerHandler``), shutdown reaches an idle connection only after
/// `grace`; a request arriving meanwhile is served, and every answer from then on says
/// `Connection: close`, so the client does not send another on a connection about to close.
/// (The listening socket is already closed, so the client's next connection is refused cleanly.)
final class QuiesceGraceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let grace: TimeAmount
    /// Whether a request is being answered.
    private var answering = false
    /// Whether the server has started to stop.
    private var stopping = false
    /// Shutdown, held back while the connection is idle.
    private var heldShutdown: Scheduled<Void>?

    init(grace: TimeAmount = .milliseconds(250)) {
        self.grace = grace
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        answering = true
        context.fireChannelRead(data)
        if let held = heldShutdown {
            // Shutdown now: the request is underway, so the connection closes after its answer.
            held.cancel()
            heldShutdown = nil
            context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where stopping:
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            answering = false
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { stopping = true }
        guard event is ChannelShouldQuiesceEvent, !answering, heldShutdown == nil else {
            return context.fireUserInboundEventTriggered(event)
        }
        // Both run on the event loop, where the task runs too.
        let (handler, loopBound) = (NIOLoopBound(self, eventLoop: context.eventLoop), NIOLoopBound(context, eventLoop: context.eventLoop))
        heldShutdown = context.eventLoop.scheduleTask(in: grace) {
            handler.value.heldShutdown = nil
            loopBound.value.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        heldShutdown?.cancel()
    }
}
