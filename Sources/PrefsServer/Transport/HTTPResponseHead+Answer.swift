import HTTPTypes
import NIOHTTP1

extension HTTPResponseHead {
    /// The head of an answer on the general HTTP/1 path: `status`, `fields` in order, then
    /// `Content-Length` (without one, NIO's encoder frames the body chunked, or close-delimited
    /// for HTTP/1.0), `Date` and `Server: prefsd` — the head the raw-bytes path writes as bytes
    /// for the same answer (``AnswerEncoding``).
    init(status: HTTPResponse.Status, fields: [HTTPField], contentLength: Int?) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count + 3)
        for field in fields { headers.add(name: field.name.rawName, value: field.value) }
        if let contentLength { headers.add(name: "Content-Length", value: String(contentLength)) }
        headers.add(name: "Date", value: HTTPDate.shared.now())
        headers.add(name: "Server", value: "prefsd")
        // NIO's encoder names a known status by its standard phrase, whatever the status carries.
        self.init(
            version: .http1_1, status: HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase),
            headers: headers)
    }
}
