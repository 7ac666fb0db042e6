import Foundation
import Hummingbird
import Logging
import PrefsKit

/// Renders every error as the API's `{"error": {"code", "message"}}` (openapi.yaml) with a fitting status.
///
/// ``PrefsError``s keep their code; Hummingbird's own errors (unknown route, body too large,
/// bad request line) get the matching code; anything else is a 500 `internal` and is logged —
/// it means a bug, never bad input.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let prefsError = Self.prefsError(for: error)
            if prefsError.code == .internal {
                context.logger.error("\(request.method) \(request.uri.path) failed: \(String(reflecting: error))")
            }
            return .error(prefsError)
        }
    }

    static func prefsError(for error: any Error) -> PrefsError {
        switch error {
        case let error as PrefsError:
            return error
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                return PrefsError(.notFound, error.body ?? "No such endpoint; see the API in openapi.yaml.")
            case .contentTooLarge:
                return PrefsError(.tooLarge, "The request body is larger than this endpoint accepts.")
            case .methodNotAllowed:
                return PrefsError(.invalidRequest, "That method is not allowed on this endpoint.")
            default:
                return PrefsError(PrefsError.Code(httpStatus: error.status.code), error.body ?? error.status.reasonPhrase)
            }
        case let error as DecodingError:
            return PrefsError(.invalidRequest, "The request body does not have the expected shape: \(error.readableReason)")
        default:
            return PrefsError(.internal, "Internal error: \(error)")
        }
    }
}

extension Response {
    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        json(text: ByteBuffer(bytes: JSONCoding.encoded(value)), status: status)
    }

    /// A write's answer, encoded without an encoder (``WriteResult/wireJSON``).
    static func json(_ result: WriteResult) -> Response {
        json(text: ByteBuffer(string: result.wireJSON), status: .ok)
    }

    private static func json(text: ByteBuffer, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: text))
    }

    /// An error answer.
    static func error(_ error: PrefsError) -> Response {
        let answer = error.answer
        return json(text: answer.body, status: answer.status)
    }
}

extension PrefsError {
    /// The status and JSON body this error is answered with, by the router and the event loop alike.
    var answer: (status: HTTPResponse.Status, body: ByteBuffer) {
        (HTTPResponse.Status(code: code.httpStatus), ByteBuffer(bytes: JSONCoding.encoded(ErrorBody(self))))
    }
}

/// The JSON coders the server uses.
enum JSONCoding {
    /// The API's encoder (``WireJSON``).
    static let encoder = WireJSON.encoder()

    /// `value` as the API's JSON (`{}` if it cannot be encoded, which the API's types always can).
    static func encoded(_ value: some Encodable) -> Data {
        (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
    private static let decoder = WireJSON.decoder()

    /// Decodes a request body, turning any failure into a clear `invalid_json`/`invalid_request`.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer, what: String) throws -> T {
        let data = Data(buffer.readableBytesView)
        do {
            return try decoder.decode(type, from: data)
        } catch let error as PrefsError {
            throw error
        } catch let error as DecodingError {
            if case .dataCorrupted = error, (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) == nil {
                throw PrefsError(.invalidJSON, "The body is not valid JSON: \(error.readableReason)")
            }
            throw PrefsError(.invalidRequest, "The body is not \(what): \(error.readableReason)")
        }
    }
}
