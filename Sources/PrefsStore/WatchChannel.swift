import Synchronization
import PrefsKit

/// The queue between the hub (which pushes events, never waiting) and one watcher (which pulls
/// them at its own pace).
///
/// Bounded: when a watcher has `limit` events waiting, the channel ends with an `overflow`
/// event carrying the last revision it holds, so a slow watcher never blocks the writer or
/// other watchers, and can resume from that revision without missing anything.
final class WatchChannel: Sendable {
    private struct State: ~Copyable {
        var events: [ChangeEvent] = []
        var head = 0
        /// The revision of the last event queued: what an `overflow` tells the watcher to resume from.
        var lastRevision: Revision
        var ended = false
        var failure: (any Error)?
        var consumer: CheckedContinuation<ChangeEvent?, any Error>?
        /// The replay task waiting for the watcher to drain (see ``pushWhenRoom(_:)``).
        var producer: CheckedContinuation<Void, Never>?

        var count: Int { events.count - head }
    }

    let limit: Int
    private let state: Mutex<State>

    /// A channel holding at most `limit` events, for a watcher that has seen everything up to
    /// `revision` (its `since`, or the revision it started at).
    init(limit: Int, revision: Revision) {
        self.limit = max(2, limit)
        state = Mutex(State(lastRevision: revision))
    }

    /// Queues a live event. When that fills the channel, also queues `overflow` and ends it.
    /// Returns false if the channel has ended (the watcher is gone or overflowed).
    @discardableResult
    func push(_ event: ChangeEvent) -> Bool {
        let resumed: (CheckedContinuation<ChangeEvent?, any Error>, ChangeEvent)? = state.withLock { state in
            guard !state.ended else { return nil }
            state.lastRevision = event.revision
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, event)
            }
            state.events.append(event)
            if state.count >= limit - 1 {
                state.events.append(ChangeEvent(revision: event.revision, kind: .overflow))
                state.ended = true
            }
            return nil
        }
        if let (consumer, event) = resumed { consumer.resume(returning: event) }
        return !isEnded
    }

    /// Queues a replayed event, first waiting while the channel is half full: replay goes at the
    /// watcher's pace instead of overflowing it.
    func pushWhenRoom(_ event: ChangeEvent) async {
        while true {
            let full = state.withLock { $0.count >= limit / 2 && !$0.ended }
            guard full else { break }
            await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
                let waitNow = state.withLock { state in
                    guard state.count >= limit / 2, !state.ended, state.producer == nil else { return false }
                    state.producer = producer
                    return true
                }
                if !waitNow { producer.resume() }
            }
        }
        push(event)
    }

    /// Ends the channel with `overflow`, carrying the revision of the last event queued: the
    /// watcher gets what is queued, then the `overflow`, and resumes from its revision.
    func overflow() {
        let revision = state.withLock { $0.lastRevision }
        finish(finalEvent: ChangeEvent(revision: revision, kind: .overflow))
    }

    /// Ends the channel: the watcher gets what is queued, then `error` if given, else the end.
    func finish(throwing error: (any Error)? = nil, finalEvent: ChangeEvent? = nil) {
        let (consumer, producer, deliver) = state.withLock { state -> (CheckedContinuation<ChangeEvent?, any Error>?, CheckedContinuation<Void, Never>?, ChangeEvent?) in
            guard !state.ended else { return (nil, nil, nil) }
            state.ended = true
            state.failure = error
            let consumer = state.consumer
            state.consumer = nil
            let producer = state.producer
            state.producer = nil
            if consumer == nil, let finalEvent { state.events.append(finalEvent) }
            return (consumer, producer, consumer == nil ? nil : finalEvent)
        }
        producer?.resume()
        if let consumer {
            if let deliver {
                consumer.resume(returning: deliver)
            } else if let error {
                consumer.resume(throwing: error)
            } else {
                consumer.resume(returning: nil)
            }
        }
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// The next event, waiting for one; nil at the end.
    func next() async throws -> ChangeEvent? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (consumer: CheckedContinuation<ChangeEvent?, any Error>) in
                let (result, producer) = state.withLock { state -> (Result<ChangeEvent?, any Error>?, CheckedContinuation<Void, Never>?) in
                    if state.count > 0 {
                        let event = state.events[state.head]
                        state.head += 1
                        if state.head > 1024, state.head * 2 > state.events.count {
                            state.events.removeFirst(state.head)
                            state.head = 0
                        }
                        var producer: CheckedContinuation<Void, Never>?
                        if state.count < limit / 2 {
                            producer = state.producer
                            state.producer = nil
                        }
                        return (.success(event), producer)
                    }
                    if state.ended {
                        if let failure = state.failure {
                            state.failure = nil
                            return (.failure(failure), nil)
                        }
                        return (.success(nil), nil)
                    }
                    if Task.isCancelled { return (.success(nil), nil) }
                    state.consumer = consumer
                    return (nil, nil)
                }
                producer?.resume()
                if let result { consumer.resume(with: result) }
            }
        } onCancel: {
            finish()
        }
    }
}
