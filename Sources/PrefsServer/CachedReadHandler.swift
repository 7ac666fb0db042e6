#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import PrefsKit

/// Answers `GET /v1/prefs/{key}[?scope=…]` on the connection's event loop, from the store's
/// memory, before the request reaches Hummingbird.
///
/// A request through the router crosses from the event loop to a task and back; for a read
/// served from memory those crossings are most of its cost. This handler answers the plain
/// form of the hottest read itself — the same bytes the route would send — and passes every
/// other request on untouched: another method or path, other query parameters, a key or scope
/// that is not valid (so that the router words the error), a body, a `Connection` header other
/// than `close` (after which it closes the connection, as the router would). It answers only when no earlier request of the connection is still being answered
/// by the router, so answers keep their order, and it stops answering once the server starts
/// to stop, leaving the connection's end to the router and ``QuiesceGraceHandler``.
final class CachedReadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let store: any ImmediateResolving
    /// Requests passed on whose answers have not ended yet.
    private var passedOn = 0
    /// The answer to the request being read, to send once it has been read whole.
    private var answer: (head: HTTPRequest, body: String, close: Bool)?
    private var stopping = false
    private var date = HTTPDate()

    init(store: any ImmediateResolving) {
        self.store = store
    }

    /// A handler for a new connection when `service` can answer reads at once (the embedded
    /// store); none otherwise.
    static func handlers(for service: any PrefsService) -> [any RemovableChannelHandler] {
        guard let store = service as? any ImmediateResolving else { return [] }
        return [CachedReadHandler(store: store)]
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if passedOn == 0, !stopping, let (body, close) = immediateAnswer(to: request) {
                answer = (request, body, close)
                return
            }
            passedOn += 1
            context.fireChannelRead(data)
        case .body:
            if let held = answer {
                // A GET with a body: unusual, so the router has it after all.
                answer = nil
                passedOn += 1
                context.fireChannelRead(wrapInboundOut(.head(held.head)))
            }
            context.fireChannelRead(data)
        case .end:
            guard let held = answer else { return context.fireChannelRead(data) }
            answer = nil
            send(held.body, close: held.close, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { passedOn -= 1 }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { stopping = true }
        context.fireUserInboundEventTriggered(event)
    }

    /// The JSON answer to a plain read and whether to close the connection after it, or nil to
    /// leave the request to the router.
    private func immediateAnswer(to request: HTTPRequest) -> (body: String, close: Bool)? {
        let connection = request.headerFields[.connection]?.lowercased()
        guard request.method == .get, let path = request.path, path.hasPrefix("/v1/prefs/"),
            connection == nil || connection == "close", request.headerFields[.contentLength] == nil,
            request.headerFields[.transferEncoding] == nil
        else { return nil }
        let target = path.utf8.dropFirst("/v1/prefs/".utf8.count)
        let key: Substring.UTF8View
        var scopeText = "/"
        if let question = target.firstIndex(of: UInt8(ascii: "?")) {
            key = target[..<question]
            let query = target[target.index(after: question)...]
            guard query.starts(with: "scope=".utf8), let decoded = Self.percentDecoded(query.dropFirst("scope=".utf8.count))
            else { return nil }
            scopeText = decoded
        } else {
            key = target
        }
        let keyText = String(Substring(key))
        guard (try? KeyName.validate(keyText)) != nil, let scope = try? ScopePath(scopeText) else { return nil }
        guard let body = store.resolveNow(keyText, scope: scope, explain: false).compactWireJSON else { return nil }
        return (body, connection == "close")
    }

    private func send(_ body: String, close: Bool, context: ChannelHandlerContext) {
        let bytes = context.channel.allocator.buffer(string: body)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(bytes.readableBytes)
        date.stamp(&head)
        if close { head.headerFields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(bytes)), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }

    /// A query value with `%XX` decoded; nil for anything the router might read otherwise
    /// (`&`, `+`, `=`, a bad escape, bytes that are not UTF-8).
    private static func percentDecoded(_ text: Substring.UTF8View.SubSequence) -> String? {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "&"), UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "#"):
                return nil
            case UInt8(ascii: "%"):
                let high = text.index(after: index)
                guard high < text.endIndex, text.index(after: high) < text.endIndex,
                    let value = UInt8(String(decoding: [text[high], text[text.index(after: high)]], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index = text.index(high, offsetBy: 2)
                continue
            default:
                bytes.append(byte)
            }
            index = text.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
