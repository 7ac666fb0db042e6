import NIOCore
import PrefsKit

/// Sets up the front of a new connection, then leaves the pipeline: smaller first receive
/// buffers, and a ``FrontReadHandler`` before the HTTP decoder when the service can answer reads
/// at once.
///
/// NIO keeps a connection's last receive buffer for its next read, so every connection that has
/// sent a request holds one for as long as it is open: for 10 000 watch connections, 20 MiB at
/// NIO's 2 KiB. Our clients' request heads fit in 256 bytes (a longer one takes a second read, and
/// the buffers grow), and an upload's body grows them as it arrives, up to NIO's 64 KiB.
final class ConnectionSetupHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    /// NIO's adaptive sizing, starting smaller.
    static let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65536)

    private let reads: (any ImmediateResolving)?

    /// Sets up connections to `service`.
    init(service: any PrefsService) {
        reads = service as? any ImmediateResolving
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.allocator)
        if let reads { try? pipeline.addHandler(FrontReadHandler(store: reads), position: .first) }
        pipeline.removeHandler(context: context, promise: nil)
    }
}
