import Logging
import PrefsKit

/// What the handlers that answer on the event loop (``FrontAnswerHandler``,
/// ``EventLoopAnswerHandler``) share across a server's connections: what the service can answer
/// at once — reads from memory (with their memo), plain writes reported to a completion, watches
/// given as feeds; the embedded store does all three — the largest write body taken, and the
/// count of connections on each loop.
struct EventLoopAnswering: Sendable {
    /// Plain reads, if the service resolves from memory.
    let reads: ReadAnswers?
    /// Plain writes, if the service reports them to a completion.
    let writes: PlainWrites?
    /// Watches, if the service gives them as feeds.
    let watches: (any FeedWatching)?
    /// The largest write body taken on the event loop; a larger one goes to the router, which
    /// refuses it.
    let maximumWriteBytes: Int
    /// The connections on each event loop: a write commits on its connection's loop when that
    /// connection is alone there.
    let occupancy: EventLoopOccupancy

    /// What `service` can answer on the event loop, within `limits`.
    init(service: any PrefsService, limits: ServerLimits = ServerLimits(), logger: Logger = Logger(label: "prefsd")) {
        let occupancy = EventLoopOccupancy()
        reads = (service as? any ImmediateResolving).map(ReadAnswers.init)
        writes = (service as? any CompletionWriting).map { PlainWrites(store: $0, occupancy: occupancy, logger: logger) }
        watches = service as? any FeedWatching
        maximumWriteBytes = limits.maximumPutBodyBytes
        self.occupancy = occupancy
    }
}
