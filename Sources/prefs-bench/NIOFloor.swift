import Foundation
import NIOCore
import NIOPosix

/// The least a server on swift-nio can spend on a GET: a process of its own (`prefs-bench
/// --nio-floor-socket SOCKET --nio-floor-answer FILE`) that listens on a Unix socket on one event loop, as prefsd's
/// default on two cores does, and answers every request head it receives with the same bytes —
/// the daemon's own answer to the GET — without parsing, routing or reading any store. It drives
/// its reads as the daemon's front handler does (autoRead off, one read asked for after each
/// batch of bytes), the cheaper of NIO's two ways.
///
/// It is the GET rows' second baseline: what the daemon spends above it is prefsd's own work,
/// and what it spends above redis's is NIO's and the kernel's.
enum NIOFloor {
    /// Serves on `socketPath`, answering each request with the contents of `answerFile`, until
    /// the listening socket closes — in practice until the benchmark stops the process.
    static func serve(socketPath: String, answerFile: String) async throws {
        let answer = ByteBuffer(bytes: try Data(contentsOf: URL(fileURLWithPath: answerFile)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FixedAnswerHandler(answer: answer))
                }
            }
            .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true).get()
        try await server.closeFuture.get()
    }

    /// Answers each request head (bytes up to an empty line) with `answer`; requests carry no body.
    private final class FixedAnswerHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let answer: ByteBuffer
        /// How many bytes of "\r\n\r\n" the bytes so far end with.
        private var matched = 0

        init(answer: ByteBuffer) { self.answer = answer }

        func handlerAdded(context: ChannelHandlerContext) {
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        }

        func channelActive(context: ChannelHandlerContext) {
            context.read()
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.read()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            var heads = 0
            bytes.withUnsafeReadableBytes { raw in
                for byte in raw {
                    matched = byte == (matched % 2 == 0 ? 13 : 10) ? matched + 1 : (byte == 13 ? 1 : 0)
                    if matched == 4 {
                        heads += 1
                        matched = 0
                    }
                }
            }
            for _ in 0..<heads { context.write(wrapOutboundOut(answer), promise: nil) }
            if heads > 0 { context.flush() }
        }
    }
}
