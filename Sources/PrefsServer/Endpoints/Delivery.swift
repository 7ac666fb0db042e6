import PrefsEngine
import PrefsKit

/// What a listener sends for a request, as ``API`` decided it: the only three things a listener
/// knows how to send, whatever the endpoint.
enum Delivery: Sendable {
    /// This answer, now.
    case answer(Answer)
    /// The answer once it is ready: `start` hands it to `deliver`, on whichever thread finishes
    /// it (possibly before `start` returns).
    case pending(_ start: @Sendable (_ deliver: @escaping @Sendable (Answer) -> Void) -> Void)
    /// A watch's events as Server-Sent Events (``ServerSentEvent``): the `200` head with
    /// ``ServerSentEvent/headFields``, then events as the feed has them, until it ends.
    case events(any WatchFeed)
}
