import HTTPTypes
import NIOCore
import PrefsEngine
import PrefsKit
import Synchronization

/// The answers of cacheable endpoints (a preference read, a flag evaluated, from memory) by
/// request, kept until the engine takes in its next change: a preference read again and again
/// between changes is resolved and rendered once, then answered with a look-up.
///
/// A `GET` (or `HEAD`) is kept by its target; a `POST` (an OFREP evaluation, whose context is in
/// its body) by its target, then its body — so a `POST` no answer is kept for, as every write is,
/// costs one look-up of its target, and nothing is built from its body.
///
/// An answer is kept under the revision that was current before it was rendered, and a request
/// that finds the engine at another revision is answered afresh (and, at a newer one, starts the
/// memo over). An answer may therefore be newer than its revision, never older: a read after an
/// acknowledged write finds the engine at that write's revision or later, so it is never answered
/// from before it.
final class AnswerMemo: Sendable {
    /// Past this many answers the memo starts over, so reads of ever new targets (or contexts)
    /// cannot grow it without bound.
    static let capacity = 4096
    /// The longest body an answer is kept for: a context, not a document.
    static let maximumBodyBytes = 1024

    /// An answer, with the index of the endpoint that made it.
    typealias Entry = (answer: Answer, endpoint: Int)

    private struct Kept {
        var revision: Revision = -1
        /// `GET` answers by target.
        var byTarget: [String: Entry] = [:]
        /// `POST` answers by target, then body.
        var byTargetAndBody: [String: [ByteBuffer: Entry]] = [:]
        /// How many answers are kept, of both kinds.
        var count = 0
    }

    private let kept = Mutex(Kept())

    /// The answer kept for a `method` request to `target` with `body` at `engine`'s current
    /// revision, if any.
    func answer(_ method: HTTPRequest.Method, _ target: String, body: ByteBuffer?, engine: any EngineServing) -> Entry? {
        let revision = engine.committedRevision
        return kept.withLock { kept in
            guard kept.revision == revision else { return nil }
            switch method {
            case .get, .head: return kept.byTarget[target]
            case .post: return body.flatMap { body in kept.byTargetAndBody[target]?[body] }
            default: return nil
            }
        }
    }

    /// Keeps `answer`, made by the endpoint at index `endpoint`, for a `method` request to
    /// `target` with `body` (a `GET` or `HEAD`, or a `POST` whose body is at most
    /// ``maximumBodyBytes``). Call it with an answer rendered after reading `revision` (the
    /// engine's revision before it was made).
    func keep(
        _ answer: Answer, of endpoint: Int, for method: HTTPRequest.Method, _ target: String, body: ByteBuffer?, at revision: Revision
    ) {
        let body = body ?? ByteBuffer()
        let byTarget = method == .get || method == .head
        guard byTarget || (method == .post && body.readableBytes <= Self.maximumBodyBytes) else { return }
        kept.withLock { kept in
            guard revision >= kept.revision else { return }
            if revision > kept.revision || kept.count >= Self.capacity { kept = Kept(revision: revision) }
            let replaced =
                byTarget
                ? kept.byTarget.updateValue((answer, endpoint), forKey: target)
                : kept.byTargetAndBody[target, default: [:]].updateValue((answer, endpoint), forKey: body)
            if replaced == nil { kept.count += 1 }
        }
    }
}
