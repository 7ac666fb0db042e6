import HTTPTypes
import NIOCore
@testable import PrefsServer
import Testing

/// Header look-ups on the raw-bytes path: a field is found by its whole name in any case, with
/// its value's surrounding spaces trimmed, wherever its line is; a name that only begins or ends
/// like the one asked for is not it.
@Suite("Server: request header look-ups")
struct RequestHeadersTests {
    static let headers = RequestHeaders(
        lines: ByteBuffer(
            string: "Host: localhost\r\nIdempotency-Key-Extra: wrong\r\nX-Idempotency-Key: wrong too\r\n"
                + "idempotency-KEY:   0190-abc \t\r\nIf-Match: \"7\"\r\nUser-Agent: prefsctl/1.0\r\n"))

    @Test func findsAFieldByItsWholeNameInAnyCase() {
        #expect(Self.headers[HTTPField.Name("Idempotency-Key")!] == "0190-abc")
        #expect(Self.headers[.ifMatch] == "\"7\"")
        #expect(Self.headers[HTTPField.Name("Host")!] == "localhost")
        #expect(Self.headers[.userAgent] == "prefsctl/1.0")
    }

    @Test func findsNoFieldThatIsNotThere() {
        #expect(Self.headers[.contentType] == nil)
        #expect(Self.headers[HTTPField.Name("Idempotency")!] == nil)
        #expect(RequestHeaders(lines: ByteBuffer())[HTTPField.Name("Host")!] == nil)
    }
}
