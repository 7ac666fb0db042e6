#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HTTPTypes
import NIOCore

/// The last whole answer a connection wrote to a `GET` or `POST` that kept the connection open,
/// with its bytes, kept for the rest of that second: a client that reads the same preference (or
/// evaluates the same flag) again and again between changes (the memo hands it the same answer)
/// is sent the same bytes, encoded once — the `Date` header is the only part that changes, once a
/// second.
struct WrittenAnswer {
    private let status: HTTPResponse.Status
    private let fields: [HTTPField]
    private let body: ByteBuffer
    /// The second (`time()`) the bytes were encoded in.
    private let second: Int
    /// The whole answer as written.
    let bytes: ByteBuffer

    /// `answer` with its whole `body`, encoded (``AnswerEncoding``) for a `GET` or `POST` on a
    /// connection that stays open.
    init(_ answer: AnswerDelivery, body: ByteBuffer, allocator: ByteBufferAllocator) {
        status = answer.status
        fields = answer.fields
        self.body = body
        second = time(nil)
        bytes = AnswerEncoding.encoded(answer, close: false, allocator: allocator)
    }

    /// Whether these bytes answer `answer` with `body` now: the same answer, in the same second.
    func answers(_ answer: AnswerDelivery, body: ByteBuffer) -> Bool {
        self.body == body && status == answer.status && fields == answer.fields && second == time(nil)
    }
}
