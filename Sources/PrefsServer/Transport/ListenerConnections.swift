import NIOCore
import Synchronization

/// The open connections of one listener (``ConnectionListener``), so that it can stop: it asks
/// each to finish, or closes the client's side of each, and returns once all have closed.
///
/// A connection holds no task: it is served by its handlers alone, on its event loop, whichever
/// path answers it. Were a task to wait for each, as a request loop does, every idle connection
/// would hold the task and its async frames (about 2.5 KiB; 25 MiB for 10 000 watchers).
final class ListenerConnections: Sendable {
    private struct State {
        /// The open connections, by their channel.
        var open: [ObjectIdentifier: any Channel] = [:]
        /// Whether the listener has stopped: a connection that comes now is refused.
        var isFinished = false
    }

    /// Thrown to a connection that comes once the listener has stopped: it is closed.
    struct Finished: Error {}

    private let state = Mutex(State())

    /// A new connection, tracked until it closes.
    func opened(_ channel: any Channel) throws {
        let key = ObjectIdentifier(channel)
        try state.withLock { state in
            guard !state.isFinished else { throw Finished() }
            state.open[key] = channel
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.open.removeValue(forKey: key) }
        }
    }

    /// The listener has stopped: no connection is taken from now on. Returns once every
    /// connection has closed — at once if `closing` or the task is cancelled (this closes the
    /// client's side of each, which ends an idle connection and a watch, and lets an answer under
    /// way finish; a connection whose client's side is closed already is closed whole), else as each finishes, asked to (`ChannelShouldQuiesceEvent`: an idle
    /// connection closes after a moment's grace, ``QuiesceGraceHandler``, and one answering after
    /// its answer; a watch when the engine ends it).
    func finish(closing: Bool) async {
        let open = state.withLock { state in
            state.isFinished = true
            return Array(state.open.values)
        }
        await withTaskCancellationHandler {
            if closing {
                closeInputs(open)
            } else {
                for channel in open { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
            }
            for channel in open { try? await channel.closeFuture.get() }
        } onCancel: {
            closeInputs(open)
        }
    }

    /// Closes the client's side of each of `channels` still open; one whose client's side is
    /// closed already (it waits on its answer) or cannot be closed alone (TLS) is closed whole.
    private func closeInputs(_ channels: [any Channel]) {
        for channel in channels {
            channel.eventLoop.execute {
                guard channel.isActive else { return }
                channel.close(mode: .input).whenFailure { _ in channel.close(promise: nil) }
            }
        }
    }
}
