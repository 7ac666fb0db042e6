import HTTPTypes
import NIOCore
import NIOHTTP1
import PrefsKit

/// The HTTP/1 rules of a connection that neither NIO's codec nor Hummingbird keeps for us, applied
/// where a request's version is still known: between NIO's decoder and encoder and the HTTP types
/// codec, on every listener. Every request that NIO decodes passes it.
///
/// - **Persistence** (RFC 9112 §9.3): an HTTP/1.1 connection persists unless the request's
///   `Connection` header lists `close` — anywhere in the list, in any case (``ConnectionOptions``);
///   an HTTP/1.0 one only if it lists `keep-alive`. The head of a request that does not persist
///   goes on saying exactly `Connection: close`, the one form Hummingbird and the handlers behind
///   recognise, and its answer says `Connection: close`; an HTTP/1.0 answer that persists says
///   `Connection: keep-alive`. Answers keep the HTTP/1.1 status line (RFC 9110 §6.2).
/// - **HTTP/1.0 has no chunked encoding**: an answer to it of unknown length (a watch) goes
///   close-delimited instead — NIO's encoder frames that only under an HTTP/1.0 status line — and
///   the connection closes after it.
/// - **A request NIO cannot parse** (a malformed head, a bad chunk size, a body cut short, …) gets
///   400 `invalid_request`, never Hummingbird's 500, and the connection closes after it: what
///   follows on it cannot be framed. A body that breaks off fails the route reading it (the router
///   answers the 400, and nothing is stored); a head that breaks off is answered here, after the
///   answers still due. No second answer follows the one a request got.
final class HTTP1ConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What the answer to a request owes it.
    private struct Request {
        /// Whether the connection stays open after the answer.
        var persists: Bool
        /// Whether the request was HTTP/1.0.
        var http10: Bool
    }

    /// The requests passed on whose answers have not ended yet, oldest first.
    private var unanswered = CircularBuffer<Request>()
    /// Whether a request's body is being read: its head has passed, its end has not.
    private var readingBody = false
    /// Whether the connection closes once the answer being written ends.
    private var closeAfterAnswer = false
    /// Once a request's body could not be parsed: how many answers may still end before the
    /// connection closes.
    private var answersBeforeClosing: Int?
    /// The answer to a request whose head could not be parsed, sent once the answers before it end.
    private var refusal: PrefsError?
    /// Whether the connection is closing: nothing more is answered.
    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, refusal == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(var head):
            let http10 = head.version.major == 1 && head.version.minor == 0
            let persists = ConnectionOptions(head.headers["connection"]).persists(http10: http10)
            if !persists { head.headers.replaceOrAdd(name: "Connection", value: "close") }
            unanswered.append(Request(persists: persists, http10: http10))
            readingBody = true
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body:
            context.fireChannelRead(data)
        case .end:
            readingBody = false
            context.fireChannelRead(data)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once the connection is to close, NIO's decoder only repeats that it has failed.
        guard !closing, refusal == nil, answersBeforeClosing == nil else { return }
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        if readingBody {
            // The body's reader fails with the error, and the router answers it.
            readingBody = false
            answersBeforeClosing = unanswered.count
            return context.fireErrorCaught(error)
        }
        // A connection closing after the answers due has nothing more to say.
        guard unanswered.last?.persists ?? true else { return }
        refusal = error.refusal
        if unanswered.isEmpty { refuse(context: context) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closing else {
            // A second answer to a request that could not be parsed (Hummingbird's own).
            promise?.succeed(())
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            guard let request = unanswered.first else { return context.write(data, promise: promise) }
            var closes = !request.persists || answersBeforeClosing == 1
            if request.http10, head.status.mayHaveResponseBody, !head.headers.contains(name: "content-length") {
                head.version = .http1_0
                closes = true
            }
            // An answer that says so already is left as it is, the same bytes on every path.
            let says = ConnectionOptions(head.headers["connection"])
            if closes, !says.close {
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            } else if !closes, request.http10, !says.keepAlive {
                head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
            }
            // A request that does not persist has its answer's writer close the connection.
            closeAfterAnswer = closes && (request.persists || answersBeforeClosing == 1)
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard let request = unanswered.popFirst() else { return context.write(data, promise: promise) }
            if let remaining = answersBeforeClosing { answersBeforeClosing = remaining - 1 }
            guard !closeAfterAnswer else {
                closing = true
                return closeAfter(context.write(data), promise: promise, context: context)
            }
            // Its writer closes the connection after it: nothing more is answered.
            if !request.persists { closing = true }
            context.write(data, promise: promise)
            if unanswered.isEmpty, refusal != nil { refuse(context: context) }
        }
    }

    /// Answers the request that could not be parsed with its ``refusal``, then closes.
    private func refuse(context: ChannelHandlerContext) {
        guard let refusal else { return }
        closing = true
        let answer = Answer.error(refusal)
        guard case .whole(let body) = answer.body else { return }
        var headers = HTTPHeaders()
        for field in answer.fields { headers.add(name: field.name.rawName, value: field.value) }
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Date", value: HTTPDate.shared.now())
        headers.add(name: "Server", value: "prefsd")
        headers.add(name: "Connection", value: "close")
        let status = answer.status
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status.code), headers: headers)
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
        if closing, case .some(.inputClosed) = event as? ChannelEvent { context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }
}

extension HTTPParserError {
    /// The error a request NIO cannot parse is answered with.
    var refusal: PrefsError {
        PrefsError(
            .invalidRequest,
            "The request is not well-formed HTTP/1.1: \(debugDescription). Nothing was changed, and the connection is closed.")
    }
}
