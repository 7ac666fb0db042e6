import HTTPTypes
import NIOCore
import PrefsKit

/// Answers plain reads at the very front of a connection's pipeline, from the raw bytes, before
/// the HTTP decoder: for a client that only reads, as most connections of an app or `prefsctl
/// get` do, a read costs its two system calls and a look-up, not HTTP decoding and encoding.
///
/// It takes only the plainest form — `GET /v1/prefs/KEY[?scope=S] HTTP/1.1`, header lines of
/// plain visible ASCII, no body, no `Connection` header but `close` — and answers exactly what
/// ``EventLoopAnswerHandler`` would (``CachedRead``). The first request of any other shape, and
/// everything after it, goes on to the decoder untouched: the handler steps aside for the rest of
/// the connection, so it never has to order its answers against the router's. It steps aside as
/// well once the server starts to stop.
///
/// A client that sends reads faster than it takes their answers is not answered into memory
/// without bound: while the connection cannot take more, the handler holds what it has received
/// and reads no more from the socket.
final class FrontReadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Any

    /// A request head longer than this is never plain.
    static let maximumHeadBytes = 4096

    private let store: any ImmediateResolving
    /// Bytes received and not yet handled: a head that has not arrived whole, or requests
    /// waiting for the connection to take more answers.
    private var pending: ByteBuffer?
    /// Whether a read from the socket is held back until the connection takes more answers.
    private var readHeld = false
    private var steppedAside = false

    init(store: any ImmediateResolving) {
        self.store = store
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !steppedAside else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if var earlier = pending {
            pending = nil  // so that appending does not copy
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        pending = bytes
        answerPending(context: context)
    }

    func read(context: ChannelHandlerContext) {
        if !steppedAside, !context.channel.isWritable {
            readHeld = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !steppedAside {
            answerPending(context: context)
            if readHeld, !steppedAside {
                readHeld = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Answers the plain reads among the pending bytes while the connection takes answers.
    private func answerPending(context: ChannelHandlerContext) {
        guard var bytes = pending else { return }
        pending = nil
        var answered = false
        defer { if answered { context.flush() } }
        while bytes.readableBytes > 0 {
            guard context.channel.isWritable else {
                pending = bytes
                return
            }
            switch PlainRead.parse(bytes) {
            case .incomplete where bytes.readableBytes < Self.maximumHeadBytes:
                pending = bytes
                return
            case .read(let headLength, let path, let connection):
                guard let (body, close) = CachedRead.answer(toPath: path, connection: connection, from: store) else { break }
                bytes.moveReaderIndex(forwardBy: headLength)
                context.write(NIOAny(Self.encoded(body, close: close, allocator: context.channel.allocator)), promise: nil)
                answered = true
                if close {
                    context.flush()
                    answered = false
                    return context.close(promise: nil)
                }
                continue
            default:
                break
            }
            // Not plain: this request and all that follow are the decoder's.
            return stepAside(passing: bytes, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !steppedAside {
            stepAside(passing: pending, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending = nil
        context.fireChannelInactive()
    }

    private func stepAside(passing bytes: ByteBuffer?, context: ChannelHandlerContext) {
        steppedAside = true
        pending = nil
        if let bytes, bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    /// The whole answer, head and body, as ``EventLoopAnswerHandler`` sends it through the
    /// encoder.
    static func encoded(_ body: String, close: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 160 + body.utf8.count)
        buffer.writeStaticString("HTTP/1.1 200 OK\r\n")
        for field in AnswerHeaders.json(bodyLength: body.utf8.count, close: close) {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        buffer.writeString(body)
        return buffer
    }
}

/// A request head read from raw bytes, in the plainest form only.
enum PlainRead: Equatable {
    /// `GET path HTTP/1.1` with its `Connection` header, if any; `headLength` bytes long.
    case read(headLength: Int, path: String, connection: String?)
    /// No whole head yet.
    case incomplete
    /// Anything else.
    case other

    /// Reads the head at the start of `bytes`.
    static func parse(_ bytes: ByteBuffer) -> PlainRead {
        bytes.withUnsafeReadableBytes { raw in
            let prefix = "GET /v1/prefs/".utf8
            guard raw.count >= prefix.count else { return raw.elementsEqual(prefix.prefix(raw.count)) ? .incomplete : .other }
            guard raw.starts(with: prefix) else { return .other }
            // The request line.
            let lineEnd: Int
            switch Line.end(in: raw, from: 0) {
            case .at(let end): lineEnd = end
            case .incomplete: return .incomplete
            case .malformed: return .other
            }
            let version = " HTTP/1.1".utf8
            let line = raw[4..<lineEnd]
            guard line.count > version.count, line.suffix(version.count).elementsEqual(version) else { return .other }
            let target = line.dropLast(version.count)
            guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .other }
            // The header lines, up to the empty one.
            var connection: String?
            var start = lineEnd + 2
            while true {
                let end: Int
                switch Line.end(in: raw, from: start) {
                case .at(let found): end = found
                case .incomplete: return .incomplete
                case .malformed: return .other
                }
                if end == start { break }
                let field = raw[start..<end]
                guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > start,
                    field[..<colon].allSatisfy(isTokenByte),
                    field[(colon + 1)...].allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 })
                else { return .other }
                let name = field[..<colon]
                if ["content-length", "transfer-encoding", "upgrade", "expect"].contains(where: { name.equalsIgnoringCase($0) }) {
                    return .other
                }
                if name.equalsIgnoringCase("connection") {
                    guard connection == nil else { return .other }
                    connection = String(decoding: field[(colon + 1)...], as: UTF8.self).trimmingSpaces
                }
                start = end + 2
            }
            return .read(headLength: start + 2, path: String(decoding: target, as: UTF8.self), connection: connection)
        }
    }

    /// RFC 9110's `tchar`: the bytes a header name is made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// Where a line of a request head ends: at a CR followed by LF.
private enum Line {
    case at(Int)
    case incomplete
    /// A bare CR or LF: not a plain head.
    case malformed

    /// The end of the line that starts at `start`.
    static func end(in raw: UnsafeRawBufferPointer, from start: Int) -> Line {
        var index = start
        while index < raw.count {
            switch raw[index] {
            case 0x0D:
                guard index + 1 < raw.count else { return .incomplete }
                return raw[index + 1] == 0x0A ? .at(index) : .malformed
            case 0x0A:
                return .malformed
            default:
                index += 1
            }
        }
        return .incomplete
    }
}

extension Slice<UnsafeRawBufferPointer> {
    /// Whether these bytes spell `name` (lowercase ASCII), in any case.
    fileprivate func equalsIgnoringCase(_ name: StaticString) -> Bool {
        guard count == name.utf8CodeUnitCount else { return false }
        return zip(self, UnsafeBufferPointer(start: name.utf8Start, count: count)).allSatisfy { byte, lower in
            (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == lower
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (a header value's optional whitespace).
    fileprivate var trimmingSpaces: String {
        let bytes = utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        return String(decoding: Array(bytes), as: UTF8.self)
    }
}
