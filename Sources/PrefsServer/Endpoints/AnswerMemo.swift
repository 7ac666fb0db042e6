import PrefsEngine
import PrefsKit
import Synchronization

/// The answers of cacheable endpoints (a preference read from memory) by request target, kept
/// until the engine takes in its next change: a preference read again and again between changes
/// is resolved and rendered once, then answered with a look-up.
///
/// An answer is kept under the revision that was current before it was rendered, and a request
/// that finds the engine at another revision is answered afresh (and, at a newer one, starts the
/// memo over). An answer may therefore be newer than its revision, never older: a read after an
/// acknowledged write finds the engine at that write's revision or later, so it is never answered
/// from before it.
final class AnswerMemo: Sendable {
    /// Past this many targets the memo starts over, so reads of ever new targets cannot grow it
    /// without bound.
    static let capacity = 4096

    private struct Kept {
        var revision: Revision = -1
        /// Answers by target, each with the index of the endpoint that made it.
        var answers: [String: (answer: Answer, endpoint: Int)] = [:]
    }

    private let kept = Mutex(Kept())

    /// The answer kept for `target` at `engine`'s current revision, if any, with the index of
    /// the endpoint that made it.
    func answer(for target: String, engine: any EngineServing) -> (answer: Answer, endpoint: Int)? {
        let revision = engine.committedRevision
        return kept.withLock { $0.revision == revision ? $0.answers[target] : nil }
    }

    /// Keeps `answer`, made by the endpoint at index `endpoint`, for `target`. Call it with an
    /// answer rendered after reading `revision` (the engine's revision before it was made).
    func keep(_ answer: Answer, of endpoint: Int, for target: String, at revision: Revision) {
        kept.withLock { kept in
            guard revision >= kept.revision else { return }
            if revision > kept.revision || kept.answers.count >= Self.capacity { kept = Kept(revision: revision) }
            kept.answers[target] = (answer, endpoint)
        }
    }

    /// How many answers are kept.
    var count: Int {
        kept.withLock { $0.answers.count }
    }
}
