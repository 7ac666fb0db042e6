import HTTPTypes
import NIOCore
import NIOHTTP1

/// Answers as bytes, for the raw-bytes path (``FrontAnswerHandler``): the same bytes the general
/// path (``DecodedAnswerHandler``) sends through NIO's HTTP/1 encoder for the same
/// ``AnswerDelivery`` — its fields in order, then
/// `Content-Length` (or, for a stream of unknown length, chunked framing), `Date`,
/// `Server: prefsd`, and `Connection: close` when the connection closes after it.
enum AnswerEncoding {
    /// `delivery`'s head, and what of its body is ready now: a whole body, or a watch's opening.
    /// - Parameters:
    ///   - delivery: What to send.
    ///   - close: Whether the connection closes after it (the head says so).
    ///   - allocator: Where the bytes are allocated.
    /// - Returns: The bytes to write.
    static func encoded(_ delivery: AnswerDelivery, close: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var capacity = 192
        if case .whole(let bytes) = delivery.body { capacity += bytes.readableBytes }
        var buffer = allocator.buffer(capacity: capacity)
        writeHead(
            status: delivery.status, fields: delivery.fields, contentLength: delivery.contentLength, close: close, into: &buffer)
        switch delivery.body {
        case .whole(let bytes): buffer.writeImmutableBuffer(bytes)
        case .events: buffer.writeImmutableBuffer(chunk(ServerSentEvent.opening, allocator: allocator))
        case .none, .file: break
        }
        return buffer
    }

    /// Writes a head: the status line, `fields` in order, `Content-Length` (or chunked framing when
    /// nil), `Date`, `Server`, and `Connection: close` with `close` unless `fields` say it.
    private static func writeHead(
        status: HTTPResponse.Status, fields: [HTTPField], contentLength: Int?, close: Bool, into buffer: inout ByteBuffer
    ) {
        if status == .ok {
            buffer.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            buffer.writeStaticString("HTTP/1.1 ")
            buffer.writeString(String(status.code))
            buffer.writeStaticString(" ")
            // NIO's encoder names a known status by its standard phrase, whatever the status carries.
            buffer.writeString(HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase).reasonPhrase)
            buffer.writeStaticString("\r\n")
        }
        var saysConnection = false
        for field in fields {
            if field.name == .connection { saysConnection = true }
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        if let contentLength {
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(contentLength))
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("Date: ")
        buffer.writeString(HTTPDate.shared.now())
        buffer.writeStaticString("\r\nServer: prefsd\r\n")
        if close, !saysConnection { buffer.writeStaticString("Connection: close\r\n") }
        if contentLength == nil { buffer.writeStaticString("transfer-encoding: chunked\r\n") }
        buffer.writeStaticString("\r\n")
    }

    /// One chunk of a chunked body.
    static func chunk(_ bytes: some Collection<UInt8>, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: bytes.count + 12)
        buffer.writeString(String(bytes.count, radix: 16))
        buffer.writeStaticString("\r\n")
        buffer.writeBytes(bytes)
        buffer.writeStaticString("\r\n")
        return buffer
    }

    /// The end of a chunked body.
    static let lastChunk = "0\r\n\r\n"
}
