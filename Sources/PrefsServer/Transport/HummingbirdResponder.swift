import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import PrefsEngine
import PrefsKit

/// The API behind Hummingbird: every request NIO's HTTP codec decodes (the raw-bytes path,
/// ``FrontAnswerHandler``, takes the plainest ones first) becomes an ``EndpointRequest`` that
/// ``API`` answers; this turns bodies and answers from and to Hummingbird's types, and nothing
/// else. Watch streams end when their client goes (``WatchEndings``).
package struct HummingbirdResponder: HTTPResponder {
    package typealias Context = PrefsRequestContext

    let api: API
    let endings: WatchEndings

    package func respond(to request: Request, context: Context) async throws -> Response {
        var endpointRequest = EndpointRequest(
            method: request.method, target: request.head.path ?? "/", headers: RequestHeaders(Array(request.headers)))
        endpointRequest.connection = context.connection
        let delivery: Delivery
        switch api.prepare(&endpointRequest) {
        case .answer(let answer):
            delivery = .answer(answer)
        case .endpoint(let endpoint):
            do {
                switch endpoint.body {
                case .none:
                    break
                case .whole(let limit):
                    var request = request
                    endpointRequest.body = try await Self.collect(&request, upTo: limit)
                case .streamed:
                    let reader = RequestBodyReader(request.body)
                    endpointRequest.bodyStream = AsyncThrowingStream { try await reader.next() }
                }
            } catch {
                return response(.answer(.error(API.prefsError(for: error))), to: request, context: context)
            }
            delivery = api.deliver(endpointRequest, to: endpoint)
        }
        if case .pending(let start) = delivery {
            let answer = await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
            return response(.answer(answer), to: request, context: context)
        }
        return response(delivery, to: request, context: context)
    }

    /// The body, refusing more than `limit` bytes with `too_large`.
    private static func collect(_ request: inout Request, upTo limit: Int) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw API.bodyTooLarge(limit: limit)
        } catch is NIOTooManyBytesError {
            throw API.bodyTooLarge(limit: limit)
        }
    }

    /// Hummingbird's response for a delivery that is ready.
    private func response(_ delivery: Delivery, to request: Request, context: Context) -> Response {
        switch delivery {
        case .answer(let answer):
            response(AnswerDelivery(answer, method: request.method), context: context)
        case .events(let feed):
            response(AnswerDelivery(events: feed, method: request.method), context: context)
        case .pending:
            preconditionFailure("a pending delivery is awaited before it is answered")
        }
    }

    /// Hummingbird's response that writes `delivery`: its head, then what follows it.
    private func response(_ delivery: AnswerDelivery, context: Context) -> Response {
        var headers = HTTPFields(delivery.fields)
        if let length = delivery.contentLength { headers[.contentLength] = String(length) }
        let body: ResponseBody
        switch delivery.body {
        case .none:
            body = ResponseBody()
        case .whole(let bytes):
            body = ResponseBody(byteBuffer: bytes)
        case .file(let chunks):
            body = ResponseBody(contentLength: delivery.contentLength) { writer in
                for try await chunk in chunks { try await writer.write(ByteBuffer(bytes: chunk)) }
                try await writer.finish(nil)
            }
        case .events(let feed):
            let reader = FeedReader(feed)
            let connection = context.connection
            body = ResponseBody { [endings] writer in
                endings.register({ reader.end() }, on: connection)
                defer { endings.remove(connection) }
                try await writer.write(ByteBuffer(bytes: ServerSentEvent.opening))
                while true {
                    switch AnswerDelivery.part(for: await reader.next()) {
                    case .write(let bytes):
                        try await writer.write(ByteBuffer(bytes: bytes))
                    case .wait:
                        continue
                    case .end(let last):
                        if let last { try await writer.write(ByteBuffer(bytes: last)) }
                        return try await writer.finish(nil)
                    }
                }
            }
        }
        return Response(status: delivery.status, headers: headers, body: body)
    }
}

/// Pulls a request body one buffer at a time: each is read from the connection only when the
/// consumer (an upload) asks for it, so a slow consumer slows the sender down instead of the body
/// piling up in memory.
private actor RequestBodyReader {
    private var buffers: RequestBody.AsyncIterator

    init(_ body: RequestBody) {
        buffers = body.makeAsyncIterator()
    }

    func next() async throws -> Data? {
        // An actor's stored iterator cannot be advanced in place across a suspension.
        var iterator = buffers
        defer { buffers = iterator }
        return try await iterator.next(isolation: self).map { Data($0.readableBytesView) }
    }
}

extension HTTPParserError: BodyError {
    /// A body NIO cannot frame (a bad chunk size, a body cut short): ``HTTP1ConnectionHandler``
    /// closes the connection after the answer.
    var prefsError: PrefsError { refusal }
}
