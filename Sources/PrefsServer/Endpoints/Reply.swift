import PrefsEngine
import PrefsKit

/// How an endpoint answers a request: with an answer ready now, or with what will produce one —
/// never by itself waiting, so that a listener can answer on the connection's own thread what
/// needs no task (a read from memory, a write the group commit reports to a completion, a watch
/// read as a feed).
enum Reply: Sendable {
    /// The answer, ready now.
    case now(Answer)
    /// The answer comes once work the engine does by itself is done: `start` hands it the
    /// result, on whichever thread finishes it (possibly before `start` returns).
    case later(_ start: @Sendable (_ finish: @escaping @Sendable (Result<Answer, any Error>) -> Void) -> Void)
    /// The answer comes from async work on the service.
    case task(@Sendable () async throws -> Answer)
    /// A watch's changes as Server-Sent Events, for as long as it lasts.
    case events(any WatchFeed)
}
