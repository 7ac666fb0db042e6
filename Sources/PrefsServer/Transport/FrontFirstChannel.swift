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
/// uses Hummingbird's HTTP decoder and encoder, its async channel, or the request loop its task
/// runs. Made at once, they held about 8 KiB of each idle connection's 12: the loop suspended in
/// its task (5.7 KiB of async frames) and the handlers. Here a connection starts with the front
/// handler and prefsd's own handlers; the others are put behind the front handler, as
/// `HTTP1Channel.setup` would have put them, at the moment it steps aside, before it passes on a
/// byte; and the connection's task waits on one future until then, ending if the connection closes
/// first.
struct FrontFirstChannel: ServerChildChannel {
    /// A connection, and its async channel once the front handler has stepped aside (nil if it
    /// closed first).
    struct Connection: ServerChildChannelValue {
        let channel: any Channel
        let http: EventLoopFuture<HTTP1Channel.Value?>
    }

    /// The connection Hummingbird would serve: its configuration (whose additional handlers a
    /// connection starts with) and request loop.
    let http1: HTTP1Channel
    /// Handlers of HTTP parts, put behind Hummingbird's codec with its handlers.
    let partHandlers: @Sendable () -> [any RemovableChannelHandler]

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandlers(http1.configuration.additionalChannelHandlers())
            let front = try pipeline.handler(type: FrontAnswerHandler.self)
            let http = NIOLoopBoundBox<HTTP1Channel.Value?>(nil, eventLoop: channel.eventLoop)
            front.willStepAside = { http.value = try makeHTTP(on: channel, behind: front, logger: logger) }
            return Connection(channel: channel, http: front.steppedAside.map { steppedAside in steppedAside ? http.value : nil })
        }
    }

    func handle(value connection: Connection, logger: Logger) async {
        // Cancelled as Hummingbird's own loop is when the server stops at once: the client's side
        // is closed, and the connection ends.
        let http = await withTaskCancellationHandler {
            (try? await connection.http.get()) ?? nil
        } onCancel: {
            connection.channel.close(mode: .input, promise: nil)
        }
        guard let http else { return }
        await http1.handle(value: http, logger: logger)
    }

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
    /// `http1(configuration:)` handlers, with `partHandlers` behind its codec, once it needs them.
    static func frontFirst(
        configuration: HTTP1Channel.Configuration,
        partHandlers: @autoclosure @escaping @Sendable () -> [any RemovableChannelHandler]
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            FrontFirstChannel(http1: HTTP1Channel(responder: responder, configuration: configuration), partHandlers: partHandlers)
        }
    }
}
