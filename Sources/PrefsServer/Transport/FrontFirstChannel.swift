import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 connection (`HTTP1Channel`), set up only once the connection needs it:
/// when the ``FrontAnswerHandler`` steps aside (a request of another shape, or the server starting
/// to stop).
///
/// Nearly every connection is answered in full at the front — reads, writes, watches — and never
/// uses Hummingbird's HTTP decoder and encoder, its async channel, or the request loop a task runs
/// for it. Made at once, they held about 8 KiB of each idle connection's 12: the loop suspended
/// in its task (5.7 KiB of async frames) and the handlers. Here a connection starts with the front
/// handler and prefsd's own handlers, and its task in Hummingbird's server ends at once. The
/// others are put behind the front handler, as `HTTP1Channel.setup` would have put them, at the
/// moment it steps aside, before it passes on a byte; and the request loop is then run beside the
/// server (``FrontFirstConnections``, ``FrontFirstApplication``).
struct FrontFirstChannel: ServerChildChannel {
    /// A connection, served by its handlers.
    struct Connection: ServerChildChannelValue {
        let channel: any Channel
    }

    /// The connection Hummingbird would serve: its configuration (whose additional handlers a
    /// connection starts with) and request loop.
    let http1: HTTP1Channel
    /// Handlers of HTTP parts, put behind Hummingbird's codec with its handlers.
    let partHandlers: @Sendable () -> [any RemovableChannelHandler]
    /// The server's connections, which run the request loops.
    let connections: FrontFirstConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandlers(http1.configuration.additionalChannelHandlers())
            let front = try pipeline.handler(type: FrontAnswerHandler.self)
            try connections.opened(channel)
            front.stepsAside = { steppedAside in
                connections.leftTheFront(channel)
                guard steppedAside else { return }
                let http = try makeHTTP(on: channel, behind: front, logger: logger)
                try connections.run { await http1.handle(value: http, logger: logger) }
            }
            return Connection(channel: channel)
        }
    }

    /// Returns at once: the connection's handlers serve it, and a request loop is run for it if it
    /// needs one (``setup(channel:logger:)``).
    func handle(value connection: Connection, logger: Logger) async {}

    /// Hummingbird's HTTP/1 handlers, in `HTTP1Channel.setup`'s order, behind `front` (with
    /// prefsd's HTTP/1 rules, ``HTTP1ConnectionHandler``, before the HTTP types codec) and at the
    /// end (after ``partHandlers``), and the async channel its request loop reads from and writes
    /// to.
    private func makeHTTP(on channel: any Channel, behind front: FrontAnswerHandler, logger: Logger) throws -> HTTP1Channel.Value {
        let pipeline = channel.pipeline.syncOperations
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = http1.configuration.httpDecoder.maxHeaderFieldSize
        limits.maxHeaderListSize = http1.configuration.httpDecoder.maxHeaderListSize
        limits.maxHeaderFieldCount = http1.configuration.httpDecoder.maxHeaderFieldCount
        try pipeline.configureHTTPServerPipeline(
            position: .after(front),
            withPipeliningAssistance: false,  // HTTP is pipelined by NIOAsyncChannel
            withErrorHandling: false,  // Hummingbird's responder handles errors
            withOutboundHeaderValidation: false,  // Swift HTTP Types validate them already
            withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits
        )
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        try pipeline.addHandlers([HTTP1ConnectionHandler(), HTTP1ToHTTPServerCodec(secure: false)], position: .after(decoder))
        try pipeline.addHandlers(partHandlers())
        try pipeline.addHandler(
            HTTPConnectionStateHandler(idleTimeout: http1.configuration.idleTimeout.map { .init($0) }, logger: logger))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }
}

extension HTTPServerBuilder {
    /// An HTTP/1 server whose connections are answered at the front first (``FrontFirstChannel``):
    /// each starts with `configuration`'s additional handlers, and has Hummingbird's
    /// `http1(configuration:)` handlers, with `partHandlers` behind its codec, once it needs them,
    /// and its request loop run by `connections`.
    static func frontFirst(
        configuration: HTTP1Channel.Configuration,
        partHandlers: @escaping @Sendable () -> [any RemovableChannelHandler],
        connections: FrontFirstConnections
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            FrontFirstChannel(
                http1: HTTP1Channel(responder: responder, configuration: configuration), partHandlers: partHandlers,
                connections: connections)
        }
    }
}
