import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Hummingbird's HTTP/1 connection (`HTTP1Channel`) that starts its request loop only once the
/// connection needs it: when the ``FrontAnswerHandler`` steps aside (a request of another shape,
/// or the server starting to stop).
///
/// Hummingbird serves each connection from a task of its own, suspended in its request loop
/// while the connection is open — about 5.7 KiB a connection in the task and its async frames,
/// half of what an idle connection holds. Nearly every connection is answered in full at the
/// front (reads, writes, watches), its decoder and that loop never used: here its task waits on
/// one future instead, and ends when the connection closes without having needed the loop.
struct FrontFirstChannel: ServerChildChannel {
    /// A connection as Hummingbird set it up, and whether the front handler stepped aside on it
    /// (true) or it closed without (false).
    struct Connection: ServerChildChannelValue {
        let http: HTTP1Channel.Value
        let steppedAside: EventLoopFuture<Bool>
        var channel: any Channel { http.channel }
    }

    /// The connection Hummingbird would serve.
    let http1: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Connection> {
        http1.setup(channel: channel, logger: logger).flatMapThrowing { http in
            let front = try channel.pipeline.syncOperations.handler(type: FrontAnswerHandler.self)
            return Connection(http: http, steppedAside: front.steppedAside)
        }
    }

    func handle(value connection: Connection, logger: Logger) async {
        // Cancelled as Hummingbird's own loop is when the server stops at once: the client's side
        // is closed, and the connection ends.
        let steppedAside = await withTaskCancellationHandler {
            (try? await connection.steppedAside.get()) ?? false
        } onCancel: {
            connection.channel.close(mode: .input, promise: nil)
        }
        guard steppedAside else {
            // The connection's async channel is finished as its request loop would have finished
            // it (its writer must be), and closed — closed already.
            try? await connection.http.executeThenClose { _, _ in }
            return
        }
        await http1.handle(value: connection.http, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// An HTTP/1 server whose connections are answered at the front first (``FrontFirstChannel``),
    /// set up as Hummingbird's `http1(configuration:)` would set them up.
    static func frontFirst(configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in FrontFirstChannel(http1: HTTP1Channel(responder: responder, configuration: configuration)) }
    }
}
