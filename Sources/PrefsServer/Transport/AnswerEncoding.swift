import HTTPTypes
import NIOCore
import NIOHTTP1

/// Answers as bytes, for the raw-bytes path (``FrontAnswerHandler``): the same bytes Hummingbird
/// and NIO's HTTP/1 encoder send for the same ``Answer`` — its fields in order, then
/// `Content-Length` (or, for a stream of unknown length, chunked framing), `Date`,
/// `Server: prefsd`, and `Connection: close` when the connection closes after it.
enum AnswerEncoding {
    /// A whole answer, head and body (no body for a `HEAD` request, `headOnly`).
    static func encoded(_ answer: Answer, bytes: ByteBuffer, headOnly: Bool, close: Bool, allocator: ByteBufferAllocator)
        -> ByteBuffer
    {
        var buffer = allocator.buffer(capacity: 192 + (headOnly ? 0 : bytes.readableBytes))
        writeHead(status: answer.status, fields: answer.fields, contentLength: bytes.readableBytes, close: close, into: &buffer)
        if !headOnly { buffer.writeImmutableBuffer(bytes) }
        return buffer
    }

    /// Writes a head: the status line, `fields` in order, `Content-Length` (or chunked framing when
    /// nil), `Date`, `Server`, and `Connection: close` with `close` unless `fields` say it.
    static func writeHead(
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
