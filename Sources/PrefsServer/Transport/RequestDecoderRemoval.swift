import NIOCore
import NIOHTTP1

/// Takes the HTTP request decoder out of a connection that will parse no more requests — one
/// streaming a watch until it closes — putting in its place a handler that drops whatever the
/// client still sends.
///
/// The decoder keeps its parser, buffers and header storage for as long as the connection is
/// open: about 1.5 KiB, for 10 000 watch connections 15 MiB. The connection's end (the client
/// closing, or the stream ending) does not depend on it.
enum RequestDecoderRemoval {
    /// Swaps the decoder of `context`'s pipeline for an ``InputDropper``, once the read under
    /// way has been handled.
    static func removeDecoder(from context: ChannelHandlerContext) {
        let pipeline = NIOLoopBound(context.pipeline, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let operations = pipeline.value.syncOperations
            guard let decoder = try? operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self),
                (try? operations.addHandler(InputDropper(), position: .after(decoder.handler))) != nil
            else { return }
            operations.removeHandler(context: decoder, promise: nil)
        }
    }
}

/// Drops the bytes a client sends on a connection that reads no more requests.
final class InputDropper: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
