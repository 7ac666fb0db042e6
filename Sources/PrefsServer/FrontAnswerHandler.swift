import HTTPTypes
import NIOCore
import PrefsKit

/// Answers plain reads and writes at the very front of a connection's pipeline, from the raw
/// bytes, before the HTTP decoder: for a client that only reads and sets preferences, as most
/// connections of an app or `prefsctl` do, a request costs its two system calls and the work
/// itself, not HTTP decoding and encoding.
///
/// It takes only the plainest forms — `GET /v1/prefs/KEY[?scope=S] HTTP/1.1` without a body, and
/// `PUT` of the same target with a `Content-Length` body of JSON no larger than the server takes;
/// header lines of plain visible ASCII — and, closing the connection after the answer when its
/// `Connection` header says `close` (``ConnectionOptions``), answers exactly
/// what ``EventLoopAnswerHandler`` would (``ReadAnswers``, ``PlainWrites``). The first request of
/// any other shape, and everything after it, goes on to the decoder untouched: the handler steps
/// aside for the rest of the connection, so it never has to order its answers against the
/// router's. It steps aside as well once the server starts to stop.
///
/// While a write awaits its commit, what the client sends next waits, and so do events that would
/// cut the answer off (the client closing its side, the server starting to stop). Reading goes on
/// meanwhile until ``maximumPendingBytes`` wait: a client waiting for its answer sends nothing,
/// and NIO would switch the socket's read interest off and on again around every write (two
/// `epoll_ctl` calls a write). A client that sends requests faster than it takes their answers
/// is not answered into memory without bound: while the connection cannot take more, the handler
/// holds what it has received and reads no more from the socket.
///
/// Until it steps aside it also drives the connection's reads (autoRead off): NIO's own read after
/// every read from the socket passes through every handler of the pipeline, which costs a plain
/// request more than its parsing; from the front it costs one call. It also keeps the count of
/// connections on its event loop (``EventLoopOccupancy``).
final class FrontAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Any

    /// A request head longer than this is never plain.
    static let maximumHeadBytes = 4096
    /// While a write awaits its commit, reading stops once this much has arrived after it.
    static let maximumPendingBytes = 65536

    private let reads: ReadAnswers
    private let answering: EventLoopAnswering
    /// Bytes received and not yet handled: a request that has not arrived whole, or requests
    /// waiting for a write's answer or for the connection to take more answers.
    private var pending: ByteBuffer?
    /// Whether a read from the socket is held back until a write is answered or the connection
    /// takes more answers.
    private var readHeld = false
    private var steppedAside = false
    /// Whether a write awaits its commit; meanwhile events wait in `heldEvents`, in order.
    private var writing = false
    private var heldEvents: [Any] = []
    /// Whether a write is being submitted: its answer, if it comes at once, leaves taking up
    /// what follows to the loop that submitted it.
    private var submitting = false
    /// Whether an answer has asked to close the connection (or the connection has gone): nothing
    /// more is answered.
    private var closing = false

    /// Answers plain reads and writes as `answering` says; nil if the service cannot answer
    /// reads at once.
    init?(answering: EventLoopAnswering) {
        guard let reads = answering.reads else { return nil }
        self.reads = reads
        self.answering = answering
    }

    func handlerAdded(context: ChannelHandlerContext) {
        answering.occupancy.connectionOpened(on: context.eventLoop)
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        read(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Before stepping aside, nothing has gone on to the handlers behind.
        guard !steppedAside else { return context.fireChannelReadComplete() }
        read(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        answering.occupancy.connectionClosed(on: context.eventLoop)
        closing = true
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
        if !writing { answerPending(context: context) }
    }

    func read(context: ChannelHandlerContext) {
        let pendingBytes = pending?.readableBytes ?? 0
        if !steppedAside, !context.channel.isWritable || (writing && pendingBytes >= Self.maximumPendingBytes) {
            readHeld = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !steppedAside, !writing {
            answerPending(context: context)
            resumeReading(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Answers the plain requests among the pending bytes while the connection takes answers,
    /// up to a write whose answer must wait for its commit.
    private func answerPending(context: ChannelHandlerContext) {
        guard var bytes = pending else { return }
        pending = nil
        var answered = false
        defer { if answered { context.flush() } }
        while bytes.readableBytes > 0, !closing {
            guard context.channel.isWritable else {
                pending = bytes
                return
            }
            switch PlainHead.parse(bytes) {
            case .incomplete where bytes.readableBytes < Self.maximumHeadBytes:
                pending = bytes
                return
            case .read(let headLength, let path, let connection):
                guard let (body, close) = reads.answer(toPath: path, connection: connection) else { break }
                bytes.moveReaderIndex(forwardBy: headLength)
                let answer = Self.encoded(body, close: close, allocator: context.channel.allocator)
                context.write(NIOAny(answer), promise: nil)
                answered = true
                if close {
                    context.flush()
                    answered = false
                    closing = true
                    return context.close(promise: nil)
                }
                continue
            case .write(let headLength, let path, let connection, let bodyLength):
                guard let writes = answering.writes, bodyLength <= answering.maximumWriteBytes,
                    let (key, scope, close) = CachedRead.plainTarget(path, connection: connection)
                else { break }
                guard bytes.readableBytes >= headLength + bodyLength else {
                    pending = bytes
                    return
                }
                let body = bytes.readableBytesView.dropFirst(headLength).prefix(bodyLength)
                // Not JSON: the router words the error.
                guard let value = try? JSONValue(parsing: body) else { break }
                bytes.moveReaderIndex(forwardBy: headLength + bodyLength)
                if answered {
                    context.flush()
                    answered = false
                }
                submit(writes, key: key, value: value, scope: scope, target: path, close: close, context: context)
                guard !writing else {
                    // The answer comes once the write has committed; what follows waits for it.
                    pending = bytes
                    return
                }
                continue
            case .incomplete, .other:
                break
            }
            // Not plain: this request and all that follow are the decoder's.
            return stepAside(passing: bytes, context: context)
        }
    }

    /// Submits a plain write; its answer comes before this returns if it commits here, else later.
    private func submit(
        _ writes: PlainWrites, key: String, value: JSONValue, scope: ScopePath, target: String, close: Bool,
        context: ChannelHandlerContext
    ) {
        writing = true
        submitting = true
        defer { submitting = false }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        writes.submit(key, to: value, scope: scope, target: target, on: context.eventLoop) { status, body in
            bound.value.handler.answerWrite(status: status, body: body, close: close, context: bound.value.context)
        }
    }

    /// Sends a write's answer, then takes up what waited for it.
    private func answerWrite(status: HTTPResponse.Status, body: ByteBuffer, close: Bool, context: ChannelHandlerContext) {
        writing = false
        guard !closing else { return }
        let answer = Self.encoded(status: status, body: body, close: close, allocator: context.channel.allocator)
        let written = context.writeAndFlush(NIOAny(answer))
        if close {
            closing = true
            pending = nil
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in loopBound.value.close(promise: nil) }
            return
        }
        // Answered at once: the loop that submitted the write goes on by itself.
        guard !submitting else { return }
        answerPending(context: context)
        guard !writing else { return }
        let events = heldEvents
        heldEvents = []
        for event in events { userInboundEventTriggered(context: context, event: event) }
        resumeReading(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !writing else { return heldEvents.append(event) }
        if event is ChannelShouldQuiesceEvent, !steppedAside {
            stepAside(passing: pending, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending = nil
        closing = true
        context.fireChannelInactive()
    }

    private func resumeReading(context: ChannelHandlerContext) {
        guard readHeld else { return }
        readHeld = false
        context.read()
    }

    private func stepAside(passing bytes: ByteBuffer?, context: ChannelHandlerContext) {
        steppedAside = true
        pending = nil
        // NIO reads again after every read from now on, as the handlers behind expect.
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        if let bytes, bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
        resumeReading(context: context)
    }

    /// The whole answer, head and body, as the HTTP encoder writes what ``EventLoopAnswerHandler``
    /// sends.
    static func encoded(status: HTTPResponse.Status, body: ByteBuffer, close: Bool, allocator: ByteBufferAllocator)
        -> ByteBuffer
    {
        var buffer = allocator.buffer(capacity: 160 + body.readableBytes)
        AnswerHeaders.writeJSONHead(status: status, bodyLength: body.readableBytes, close: close, into: &buffer)
        buffer.writeImmutableBuffer(body)
        return buffer
    }

    /// ``encoded(status:body:close:allocator:)`` for a read's `200 OK` and body text.
    static func encoded(_ body: String, close: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 160 + body.utf8.count)
        AnswerHeaders.writeJSONHead(status: .ok, bodyLength: body.utf8.count, close: close, into: &buffer)
        buffer.writeString(body)
        return buffer
    }
}

/// A request head read from raw bytes, in the plainest form only.
enum PlainHead: Equatable {
    /// `GET path HTTP/1.1` with its `Connection` options, and no body; `headLength` bytes long.
    case read(headLength: Int, path: String, connection: ConnectionOptions)
    /// `PUT path HTTP/1.1` with its `Connection` options, and a body of `bodyLength` bytes after
    /// the `headLength` of the head.
    case write(headLength: Int, path: String, connection: ConnectionOptions, bodyLength: Int)
    /// No whole head yet.
    case incomplete
    /// Anything else.
    case other

    private static let readPrefix = Array("GET /v1/prefs/".utf8)
    private static let writePrefix = Array("PUT /v1/prefs/".utf8)
    /// Header fields no plain request has.
    private static let refusedFields: [StaticString] = ["transfer-encoding", "upgrade", "expect"]

    /// Reads the head at the start of `bytes`.
    static func parse(_ bytes: ByteBuffer) -> PlainHead {
        bytes.withUnsafeReadableBytes { raw in
            let isWrite = raw.first == UInt8(ascii: "P")
            let prefix = isWrite ? Self.writePrefix : Self.readPrefix
            guard raw.starts(with: prefix.prefix(raw.count)) else { return .other }
            guard raw.count >= prefix.count else { return .incomplete }
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
            var connection: [String] = []
            var bodyLength: Int?
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
                if Self.refusedFields.contains(where: { name.equalsIgnoringCase($0) }) {
                    return .other
                }
                if name.equalsIgnoringCase("content-length") {
                    // Only a write has a body, and its length once, in plain digits.
                    let digits = String(decoding: field[(colon + 1)...], as: UTF8.self).trimmingSpaces
                    guard isWrite, bodyLength == nil, digits.count <= 9, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                        let length = Int(digits)
                    else { return .other }
                    bodyLength = length
                }
                if name.equalsIgnoringCase("connection") {
                    connection.append(String(decoding: field[(colon + 1)...], as: UTF8.self))
                }
                start = end + 2
            }
            let path = String(decoding: target, as: UTF8.self)
            let options = ConnectionOptions(connection)
            guard isWrite else { return .read(headLength: start + 2, path: path, connection: options) }
            guard let bodyLength else { return .other }
            return .write(headLength: start + 2, path: path, connection: options, bodyLength: bodyLength)
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
