import HTTPTypes

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
