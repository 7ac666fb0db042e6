import NIOCore
import Synchronization

/// The connections of one front-first server (``FrontFirstChannel``): those answered at the front,
/// which need no task, and the request loops of those whose front handler stepped aside, which
/// ``FrontFirstApplication`` runs.
///
/// A connection answered at the front is served by its handlers alone, on its event loop; its
/// task in Hummingbird's server ends as soon as it starts. Were it to wait there instead, as
/// Hummingbird's own request loop does, every idle connection would hold the task and its async
/// frames (about 2.5 KiB; 25 MiB for 10 000 watchers). What a waiting task would still do is kept
/// here instead: the server does not return before those connections have closed — once each has
/// finished, when it stops gracefully; at once when it is cancelled, closing the client's side of
/// each (which the front handler takes for the end of an idle connection), as Hummingbird's loop
/// does when its task is cancelled.
final class FrontFirstConnections: Sendable {
    private struct State {
        /// The connections answered at the front, by their channel.
        var answeredAtTheFront: [ObjectIdentifier: any Channel] = [:]
        /// Whether the server has stopped: a connection that comes now is refused.
        var isFinished = false
    }

    /// Thrown to a connection that comes once the server has stopped, or steps aside once its
    /// request loops have ended: it is closed.
    struct Finished: Error {}

    private let state = Mutex(State())
    /// The request loops of connections that stepped aside, to run until the server stops.
    let requestLoops: AsyncStream<@Sendable () async -> Void>
    private let requestLoopsInput: AsyncStream<@Sendable () async -> Void>.Continuation

    init() {
        (requestLoops, requestLoopsInput) = AsyncStream.makeStream()
    }

    /// A new connection, answered at the front until it steps aside or closes (``leftTheFront(_:)``).
    func opened(_ channel: any Channel) throws {
        try state.withLock { state in
            guard !state.isFinished else { throw Finished() }
            state.answeredAtTheFront[ObjectIdentifier(channel)] = channel
        }
    }

    /// `channel`'s front handler stepped aside, or it closed.
    func leftTheFront(_ channel: any Channel) {
        _ = state.withLock { $0.answeredAtTheFront.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Runs a connection's request loop, once it has stepped aside.
    func run(_ requestLoop: @escaping @Sendable () async -> Void) throws {
        guard case .enqueued = requestLoopsInput.yield(requestLoop) else { throw Finished() }
    }

    /// The server has stopped: no connection is taken from now on. Returns once every connection
    /// answered at the front has closed — at once if `closing` or the task is cancelled (this
    /// closes the client's side of each, which the front handler takes for the end of an idle
    /// connection), else as each ends by itself (a server stopped gracefully has asked each to
    /// finish, and a request sent meanwhile is still answered) — then ends ``requestLoops``. A
    /// connection may still step aside meanwhile, and have its request loop run.
    func finish(closing: Bool) async {
        let answeredAtTheFront = state.withLock { state in
            state.isFinished = true
            return Array(state.answeredAtTheFront.values)
        }
        await withTaskCancellationHandler {
            if closing { closeInputAtTheFront() }
            for channel in answeredAtTheFront { try? await channel.closeFuture.get() }
        } onCancel: {
            closeInputAtTheFront()
        }
        requestLoopsInput.finish()
    }

    /// Closes the client's side of each connection still answered at the front, on its event
    /// loop — where it steps aside — so that one that has stepped aside meanwhile is left to its
    /// request loop, and one that has closed is left alone.
    private func closeInputAtTheFront() {
        let channels = state.withLock { Array($0.answeredAtTheFront.values) }
        for channel in channels {
            channel.eventLoop.execute {
                let atTheFront = self.state.withLock { $0.answeredAtTheFront[ObjectIdentifier(channel)] != nil }
                if atTheFront, channel.isActive { channel.close(mode: .input, promise: nil) }
            }
        }
    }
}
