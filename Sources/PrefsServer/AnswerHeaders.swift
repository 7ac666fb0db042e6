import HTTPTypes
import NIOCore
import NIOHTTP1

/// The header fields of the answers the daemon makes without the router, in the order the router's
/// answers have them, so that both are the same bytes.
enum AnswerHeaders {
    /// A JSON answer's fields; with `close`, the `Connection: close` a closing answer carries.
    static func json(bodyLength: Int, close: Bool) -> [HTTPField] {
        var fields = [
            HTTPField(name: .contentType, value: "application/json"),
            HTTPField(name: .contentLength, value: String(bodyLength)),
        ]
        fields += common()
        if close { fields.append(HTTPField(name: .connection, value: "close")) }
        return fields
    }

    /// Writes a JSON answer's head as NIO's HTTP/1 encoder writes one with ``json(bodyLength:close:)``'s
    /// fields: the status line, the same fields in the same order, the empty line. For the answers
    /// ``FrontAnswerHandler`` writes straight to the socket, without building the fields.
    static func writeJSONHead(status: HTTPResponse.Status, bodyLength: Int, close: Bool, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        // NIO's encoder names a known status by its standard phrase, whatever the status carries.
        buffer.writeString(HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase).reasonPhrase)
        buffer.writeStaticString("\r\nContent-Type: application/json\r\nContent-Length: ")
        buffer.writeString(String(bodyLength))
        buffer.writeStaticString("\r\nDate: ")
        buffer.writeString(HTTPDate.shared.now())
        buffer.writeStaticString("\r\nServer: prefsd\r\n")
        if close { buffer.writeStaticString("Connection: close\r\n") }
        buffer.writeStaticString("\r\n")
    }

    /// A watch's Server-Sent Events answer's fields. The connection closes when the stream ends
    /// (`overflow`, `shutdown`), and says so up front: a pooling client must not send its next
    /// request on it.
    static func eventStream() -> [HTTPField] {
        [HTTPField(name: .contentType, value: "text/event-stream"), HTTPField(name: .cacheControl, value: "no-cache")]
            + common() + [HTTPField(name: .connection, value: "close")]
    }

    /// What Hummingbird gives every answer: `Date`, and `Server: prefsd`.
    private static func common() -> [HTTPField] {
        [HTTPField(name: .date, value: HTTPDate.shared.now()), HTTPField(name: .server, value: "prefsd")]
    }
}
