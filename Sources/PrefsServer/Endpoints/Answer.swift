import Foundation
import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit

/// An answer: its status, its header fields beyond those every answer has (`Content-Length`,
/// `Date`, `Server`, `Connection`, which the listener adds), and its body.
struct Answer: Sendable {
    /// What follows the head.
    enum Body: Sendable {
        /// These bytes.
        case whole(ByteBuffer)
        /// `length` bytes, as the stream gives them (a file being read); of a length not known
        /// (nil), sent chunked for as long as the stream lasts — only to a request whose body is
        /// streamed (a sync stream), which the general HTTP/1 path answers.
        case streamed(length: Int?, chunks: AsyncThrowingStream<Data, any Error>)
        /// A watch's events as Server-Sent Events, for as long as it lasts: a watch that opened
        /// once the engine had read the change log (``WatchFeed/whenOpen(_:)``).
        case events(any WatchFeed)

        /// The body's length in bytes; nil for a watch's events.
        var length: Int? {
            switch self {
            case .whole(let bytes): bytes.readableBytes
            case .streamed(let length, _): length
            case .events: nil
            }
        }
    }

    var status: HTTPResponse.Status
    /// The answer's own header fields, `Content-Type` first.
    var fields: [HTTPField]
    var body: Body

    /// An answer with a JSON `body`.
    static func json(_ body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Answer {
        Answer(status: status, fields: jsonFields, body: .whole(body))
    }

    /// A JSON answer's own fields, made once: each answer shares them until it adds one.
    private static let jsonFields = [HTTPField(name: .contentType, value: "application/json")]

    /// An answer with `body`, of media `type`.
    static func whole(_ body: ByteBuffer, type: String, status: HTTPResponse.Status = .ok) -> Answer {
        Answer(status: status, fields: [HTTPField(name: .contentType, value: type)], body: .whole(body))
    }

    /// `value` as the API's JSON.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Answer {
        json(ByteBuffer(bytes: JSONCoding.encoded(value)), status: status)
    }

    /// A write's answer, written without an encoder (``WriteResult/wireJSON``).
    static func json(_ result: WriteResult) -> Answer {
        json(ByteBuffer(string: result.wireJSON))
    }

    /// An error's answer: `{"error": {"code", "message", …}}` with its status.
    static func error(_ error: PrefsError) -> Answer {
        json(ByteBuffer(bytes: JSONCoding.encoded(ErrorBody(error))), status: HTTPResponse.Status(code: error.code.httpStatus))
    }
}
