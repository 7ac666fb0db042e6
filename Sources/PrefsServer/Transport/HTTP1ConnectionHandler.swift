import HTTPTypes
import NIOCore
import NIOHTTP1
import PrefsKit

/// The HTTP/1 rules of a connection that NIO's codec does not keep for us, applied on the general
/// path, between NIO's decoder and encoder and the API on decoded requests
/// (``DecodedAnswerHandler``), on every listener. Every request that NIO decodes passes it.
///
/// - **Persistence** (RFC 9112 §9.3): an HTTP/1.1 connection persists unless the request's
///   `Connection` header lists `close` — anywhere in the list, in any case (``ConnectionOptions``);
///   an HTTP/1.0 one only if it lists `keep-alive`. The head of a request that does not persist
///   goes on saying exactly `Connection: close`, and its answer says `Connection: close`; an HTTP/1.0 answer that persists says
///   `Connection: keep-alive`. Answers keep the HTTP/1.1 status line (RFC 9110 §6.2).
/// - **HTTP/1.0 has no chunked encoding**: an answer to it of unknown length (a watch) goes
///   close-delimited instead — NIO's encoder frames that only under an HTTP/1.0 status line — and
///   the connection closes after it.
/// - **An HTTP/1.0 request with `Transfer-Encoding`** has faulty framing (RFC 9112 §6.1), though
///   NIO's decoder takes it: it is refused as one NIO cannot parse.
/// - **A request NIO cannot parse** (a malformed head, a bad chunk size, a body cut short, …) gets
///   400 `invalid_request`, and the connection closes after it: what follows on it cannot be
///   framed. A body that breaks off fails the endpoint reading it (which answers the 400, and
///   nothing is stored); a head that breaks off is answered here, after the
///   answers still due. No second answer follows the one a request got.
///
/// The rules are kept in a ``StateMachine``; the handler performs the actions it returns.
final class HTTP1ConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The connection's rules; this handler performs what they say.
    private var state = StateMachine()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            let http10 = head.version.major == 1 && head.version.minor == 0
            let action = state.headReceived(
                http10: http10, connection: ConnectionOptions(head.headers["connection"]),
                transferEncoding: head.headers.contains(name: "transfer-encoding"))
            switch action {
            case .pass: context.fireChannelRead(data)
            case .passClosing:
                head.headers.replaceOrAdd(name: "Connection", value: "close")
                context.fireChannelRead(wrapInboundOut(.head(head)))
            case .drop: break
            case .refuse(let refusal): refuse(with: refusal, context: context)
            }
        case .body:
            if state.bodyReceived() == .pass { context.fireChannelRead(data) }
        case .end:
            if state.endReceived() == .pass { context.fireChannelRead(data) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state.errorCaught(error) {
        case .forward: context.fireErrorCaught(error)
        case .ignore: break
        case .refuse(let refusal): refuse(with: refusal, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let action = state.headWritten(
                mayHaveBody: head.status.mayHaveResponseBody, hasContentLength: head.headers.contains(name: "content-length"),
                says: ConnectionOptions(head.headers["connection"]))
            guard case .write(let http10StatusLine, let connection) = action else {
                // An answer after the refusal of a request that could not be parsed.
                promise?.succeed(())
                return
            }
            if http10StatusLine { head.version = .http1_0 }
            if let connection { head.headers.replaceOrAdd(name: "Connection", value: connection) }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            switch state.bodyWritten() {
            case .write: context.write(data, promise: promise)
            case .drop: promise?.succeed(())
            }
        case .end:
            switch state.endWritten() {
            case .write:
                context.write(data, promise: promise)
            case .writeAndClose:
                closeAfter(context.write(data), promise: promise, context: context)
            case .writeThenRefuse(let refusal):
                context.write(data, promise: promise)
                refuse(with: refusal, context: context)
            case .drop:
                promise?.succeed(())
            }
        }
    }

    /// Answers the request that could not be parsed with `refusal`, then closes.
    private func refuse(with refusal: PrefsError, context: ChannelHandlerContext) {
        let answer = Answer.error(refusal)
        guard case .whole(let body) = answer.body else { return }
        var head = HTTPResponseHead(status: answer.status, fields: answer.fields, contentLength: body.readableBytes)
        head.headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        closeAfter(context.writeAndFlush(wrapOutboundOut(.end(nil))), promise: nil, context: context)
    }

    /// Once `written` is, closes the connection's sending side, and the rest once the client
    /// closes its own: closing at once would reset the connection if the client's bytes are still
    /// unread, and its last answer could be lost with them.
    private func closeAfter(_ written: EventLoopFuture<Void>, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.whenComplete { result in
            promise?.completeWith(result)
            loopBound.value.close(mode: .output).whenFailure { _ in loopBound.value.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent, state.inputClosed() == .close { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }
}

extension HTTPParserError: BodyError {
    /// A body NIO cannot frame (a bad chunk size, a body cut short): ``HTTP1ConnectionHandler``
    /// closes the connection after the answer.
    var prefsError: PrefsError { refusal }

    /// The error a request NIO cannot parse is answered with.
    var refusal: PrefsError {
        PrefsError(
            .invalidRequest,
            "The request is not well-formed HTTP/1.1: \(debugDescription). Nothing was changed, and the connection is closed.")
    }
}
