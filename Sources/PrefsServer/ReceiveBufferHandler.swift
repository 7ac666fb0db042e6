import NIOCore

/// Starts a connection's reads with 256-byte buffers instead of NIO's 2 KiB, then leaves the
/// pipeline.
///
/// NIO keeps a connection's last receive buffer for its next read, so every connection that has
/// sent a request holds one for as long as it is open: for 10 000 watch connections, 20 MiB at
/// 2 KiB. Our clients' request heads fit in 256 bytes (a longer one takes a second read, and the
/// buffers grow), and an upload's body grows them as it arrives, up to NIO's 64 KiB.
final class ReceiveBufferHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    /// NIO's adaptive sizing, starting smaller.
    static let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65536)

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.allocator)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
