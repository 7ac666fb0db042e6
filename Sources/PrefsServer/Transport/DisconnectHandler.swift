import NIOCore
import NIOHTTPTypes

/// Tells ``WatchEndings`` when a connection's client has gone: its input closed (Hummingbird
/// allows half-closed connections, so a closed socket shows up as that) or the connection closed.
/// Costs nothing per request; every event passes on unchanged.
final class DisconnectHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let endings: WatchEndings

    init(endings: WatchEndings) {
        self.endings = endings
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent { endings.inputClosed(ObjectIdentifier(context.channel)) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        endings.closed(ObjectIdentifier(context.channel))
        context.fireChannelInactive()
    }
}
