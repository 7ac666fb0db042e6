import NIOCore
import NIOHTTP1

/// Sets up the front of a new connection, then leaves the pipeline: receive buffers that start
/// smaller and may grow larger than NIO's, and a ``FrontAnswerHandler`` in its place — first, or
/// right behind TLS — which has the general HTTP/1 path put behind it when it steps aside
/// (``addGeneralPath(behind:on:)``).
///
/// NIO keeps a connection's last receive buffer for its next read, so every connection that has
/// sent a request holds one for as long as it is open: for 10 000 watch connections, 20 MiB at
/// NIO's 2 KiB. Our clients' request heads fit in 256 bytes (a longer one takes a second read, and
/// the buffers grow). An upload's body grows them as it arrives, up to 1 MiB rather than NIO's
/// 64 KiB: a 50 MiB upload then takes 50 reads, each a trip through the body stream to the
/// staging file, instead of 800 (upload 170 → 210–260 MB/s).
final class ConnectionSetupHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    /// NIO's adaptive sizing, starting smaller.
    static let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 1 << 20)

    private let api: API
    private let methods: PlainMethods
    private let occupancy: EventLoopOccupancy
    private let maximumBodyBytes: Int

    /// Sets up connections to `api`, whose raw-bytes path takes requests by `methods` with bodies
    /// up to `maximumBodyBytes` and counts connections per loop in `occupancy`.
    init(api: API, methods: PlainMethods, occupancy: EventLoopOccupancy, maximumBodyBytes: Int) {
        self.api = api
        self.methods = methods
        self.occupancy = occupancy
        self.maximumBodyBytes = maximumBodyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.allocator)
        let front = FrontAnswerHandler(api: api, methods: methods, occupancy: occupancy, maximumBodyBytes: maximumBodyBytes)
        let (api, channel) = (api, context.channel)
        front.stepsAside = { steppedAside in
            if steppedAside { try Self.addGeneralPath(behind: front, on: channel, api: api) }
        }
        // Right after this handler: behind TLS, when the connection has it (NIOSSLServerHandler).
        try? pipeline.addHandler(front, position: .after(self))
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// The general HTTP/1 path, put behind `front` as it steps aside, before it passes on a byte:
    /// NIO's decoder and encoder (the decoder tells the encoder which answers are to `HEAD`), the
    /// HTTP/1 rules (``HTTP1ConnectionHandler``), the grace at shutdown (``QuiesceGraceHandler``),
    /// and the API (``DecodedAnswerHandler``).
    static func addGeneralPath(behind front: FrontAnswerHandler, on channel: any Channel, api: API) throws {
        let pipeline = channel.pipeline.syncOperations
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldCount = 1000
        try pipeline.configureHTTPServerPipeline(
            position: .after(front), withPipeliningAssistance: false, withErrorHandling: false,
            withOutboundHeaderValidation: false, withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        try pipeline.addHandlers(
            [HTTP1ConnectionHandler(), QuiesceGraceHandler(), DecodedAnswerHandler(api: api)], position: .after(decoder))
    }
}
