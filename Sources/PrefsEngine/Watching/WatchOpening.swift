import Synchronization

/// Whether a watch is open yet. Almost every watch is open as it is subscribed; one resumed from
/// a revision older than the change log's oldest opens only once its replay has read the log and
/// found that compaction dropped none of the changes it follows — or is refused (`compacted`).
/// A listener waits for it before it sends the answer's head, so that a refusal is a status
/// (410), not an `error` event after a `200`.
final class WatchOpening: Sendable {
    private enum State {
        /// Not decided yet: who to tell once it is.
        case pending([@Sendable ((any Error)?) -> Void])
        case open
        case refused(any Error)
    }

    private let state: Mutex<State>

    /// A watch open now, or (`open` false) once ``open()`` or ``refuse(_:)`` is called.
    init(open: Bool) {
        state = Mutex(open ? .open : .pending([]))
    }

    /// Whether the watch is open.
    var isOpen: Bool {
        state.withLock { if case .open = $0 { true } else { false } }
    }

    /// Opens the watch, telling who waits. Harmless once decided.
    func open() {
        decide(.open, telling: nil)
    }

    /// Refuses the watch with `error`, telling who waits; nothing once it is open (the watch's
    /// events end with the error instead).
    func refuse(_ error: any Error) {
        decide(.refused(error), telling: error)
    }

    /// Calls `onOpen` once the watch is open (nil) or refused (the error): at once if it is
    /// decided, else from whichever thread decides it.
    func whenOpen(_ onOpen: @escaping @Sendable ((any Error)?) -> Void) {
        let decided: (any Error)?? = state.withLock { state in
            switch state {
            case .pending(var waiting):
                waiting.append(onOpen)
                state = .pending(waiting)
                return .none
            case .open: return .some(nil)
            case .refused(let error): return .some(error)
            }
        }
        if let decided { onOpen(decided) }
    }

    private func decide(_ decision: State, telling error: (any Error)?) {
        let waiting = state.withLock { state -> [@Sendable ((any Error)?) -> Void] in
            guard case .pending(let waiting) = state else { return [] }
            state = decision
            return waiting
        }
        for onOpen in waiting { onOpen(error) }
    }
}
