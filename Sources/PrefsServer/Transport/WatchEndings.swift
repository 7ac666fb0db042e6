import Synchronization

/// The watch streams being answered, by connection, so that each ends the moment its client
/// goes — rather than at its next event or progress event, up to `--progress-interval` later,
/// holding its memory and its place under `--max-watches` until then.
///
/// The route registers a stream's `end` while it streams; ``DisconnectHandler`` reports a
/// connection whose input has closed (the client closed or shut down its side) or that is gone.
/// A connection can carry one answer at a time, so at most one stream per connection.
final class WatchEndings: Sendable {
    private struct State: ~Copyable {
        var ends: [ObjectIdentifier: @Sendable () -> Void] = [:]
        /// Connections whose input closed before their stream was registered.
        var closedInputs: Set<ObjectIdentifier> = []
    }

    private let state = Mutex(State())

    /// Registers the stream answered on `connection`; ends it at once if the client has already
    /// closed its side.
    func register(_ end: @escaping @Sendable () -> Void, on connection: ObjectIdentifier) {
        let closed = state.withLock { state in
            if state.closedInputs.contains(connection) { return true }
            state.ends[connection] = end
            return false
        }
        if closed { end() }
    }

    /// The stream on `connection` has ended by itself.
    func remove(_ connection: ObjectIdentifier) {
        _ = state.withLock { $0.ends.removeValue(forKey: connection) }
    }

    /// The client closed its side of `connection`: its stream, if any, ends.
    func inputClosed(_ connection: ObjectIdentifier) {
        let end = state.withLock { state in
            state.closedInputs.insert(connection)
            return state.ends.removeValue(forKey: connection)
        }
        end?()
    }

    /// `connection` is closed: its stream, if any, ends, and nothing about it is kept.
    func closed(_ connection: ObjectIdentifier) {
        let end = state.withLock { state in
            state.closedInputs.remove(connection)
            return state.ends.removeValue(forKey: connection)
        }
        end?()
    }
}
