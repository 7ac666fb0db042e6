import HTTPTypes
import Logging
import NIOCore
import PrefsKit

/// Plain writes (`PUT /v1/prefs/{key}[?scope=]`) submitted from a connection's event loop, and
/// their answers rendered as the router renders them: the revision, or the error as
/// ``ErrorMiddleware`` words it (an internal one logged, as it logs it).
///
/// Both handlers that answer writes on the event loop, ``FrontAnswerHandler`` from raw bytes and
/// ``EventLoopAnswerHandler`` from decoded requests, submit through it.
struct PlainWrites: Sendable {
    let store: any CompletionWriting
    let occupancy: EventLoopOccupancy
    let logger: Logger

    /// Sets `key` to `value` at `scope` and hands `answer` the answer's status and body on
    /// `loop`: before returning, when the write commits on the calling thread (the connection is
    /// alone on its loop and the writer idle); else later, from the loop's queue.
    func submit(
        _ key: String, to value: JSONValue, scope: ScopePath, target: String, on loop: any EventLoop,
        answer: @escaping (_ status: HTTPResponse.Status, _ body: ByteBuffer) -> Void
    ) {
        let bound = NIOLoopBound(answer, eventLoop: loop)
        let logger = logger
        store.set(key, to: value, scope: scope, committingHere: occupancy.isAlone(on: loop)) { result in
            let (status, body) = Self.render(result, target: target, logger: logger)
            if bound.eventLoop.inEventLoop {
                bound.value(status, body)
            } else {
                bound.eventLoop.execute { bound.value(status, body) }
            }
        }
    }

    /// The status and body answering a write's `result`.
    private static func render(_ result: Result<WriteResult, any Error>, target: String, logger: Logger)
        -> (HTTPResponse.Status, ByteBuffer)
    {
        switch result {
        case .success(let written):
            return (.ok, ByteBuffer(string: written.wireJSON))
        case .failure(let error):
            let prefsError = ErrorMiddleware<PrefsRequestContext>.prefsError(for: error)
            if prefsError.code == .internal {
                logger.error("PUT \(target) failed: \(String(reflecting: error))")
            }
            return prefsError.answer
        }
    }
}
