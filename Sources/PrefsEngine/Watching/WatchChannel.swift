import CoreMetrics
import Synchronization
import PrefsKit

/// The queue between the hub (which pushes events, never waiting) and one watcher (which pulls
/// them at its own pace: a task awaiting ``next()``, or a feed's reader that ``poll()``s when
/// told the channel is ready).
///
/// Bounded: when a watcher has `limit` events waiting, the channel ends with an `overflow`
/// event carrying the last revision it holds, so a slow watcher never blocks the writer or
/// other watchers, and can resume from that revision without missing anything.
final class WatchChannel: Sendable {
    fileprivate struct State: ~Copyable {
        var events: [ChangeEvent] = []
        var head = 0
        /// The revision of the last event queued: what an `overflow` tells the watcher to resume from.
        var lastRevision: Revision
        var ended = false
        var failure: (any Error)?
        var consumer: CheckedContinuation<ChangeEvent?, any Error>?
        /// The replay task waiting for the watcher to drain (see ``pushWhenRoom(_:)``).
        var producer: CheckedContinuation<Void, Never>?
        /// A polling reader's wake-up, dropped when the channel ends.
        var onReady: (@Sendable () -> Void)?
        /// Whether the polling reader has been woken since it last found the channel empty.
        var woken = false

        var count: Int { events.count - head }
    }

    let limit: Int
    private let state: Mutex<State>
    /// Counts the events queued and the overflows.
    private let metrics: EngineMetrics

    /// A channel holding at most `limit` events, for a watcher that has seen everything up to
    /// `revision` (its `since`, or the revision it started at).
    init(limit: Int, revision: Revision, metrics: EngineMetrics) {
        self.limit = max(2, limit)
        self.metrics = metrics
        state = Mutex(State(lastRevision: revision))
    }

    /// For a reader that polls: `onReady` is called whenever the channel has something after a
    /// ``poll()`` found it empty. Set it before the first poll (what arrived before is found by
    /// that poll); ignored once the channel has ended.
    func wakeWhenReady(_ onReady: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard !state.ended || state.count > 0 else { return }
            state.onReady = onReady
        }
    }

    /// Queues a live event. When that fills the channel, also queues `overflow` and ends it.
    /// Returns false if the channel has ended (the watcher is gone or overflowed).
    @discardableResult
    func push(_ event: ChangeEvent) -> Bool {
        let (resumed, wake, ended, queued) = state.withLock { state -> ((CheckedContinuation<ChangeEvent?, any Error>, ChangeEvent)?, (@Sendable () -> Void)?, Bool, Bool) in
            guard !state.ended else { return (nil, nil, true, false) }
            state.lastRevision = event.revision
            if let consumer = state.consumer {
                state.consumer = nil
                return ((consumer, event), nil, false, true)
            }
            state.events.append(event)
            if state.count >= limit - 1 {
                state.events.append(ChangeEvent(revision: event.revision, kind: .overflow))
                state.ended = true
                return (nil, state.endReader(), true, true)
            }
            return (nil, state.wakeReader(), false, true)
        }
        if let (consumer, event) = resumed { consumer.resume(returning: event) }
        wake?()
        if queued { metrics.eventsSent.increment() }
        if queued, ended { metrics.overflows.increment() }
        return !ended
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
        metrics.overflows.increment()
        let revision = state.withLock { $0.lastRevision }
        finish(finalEvent: ChangeEvent(revision: revision, kind: .overflow))
    }

    /// Ends the channel: the watcher gets what is queued, then `error` if given, else the end.
    func finish(throwing error: (any Error)? = nil, finalEvent: ChangeEvent? = nil) {
        let (consumer, producer, deliver, wake) = state.withLock { state -> (CheckedContinuation<ChangeEvent?, any Error>?, CheckedContinuation<Void, Never>?, ChangeEvent?, (@Sendable () -> Void)?) in
            guard !state.ended else { return (nil, nil, nil, nil) }
            state.ended = true
            state.failure = error
            let consumer = state.consumer
            state.consumer = nil
            let producer = state.producer
            state.producer = nil
            if consumer == nil, let finalEvent { state.events.append(finalEvent) }
            return (consumer, producer, consumer == nil ? nil : finalEvent, state.endReader())
        }
        producer?.resume()
        wake?()
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
                    if let (event, producer) = state.takeFirst(limit: limit) { return (.success(event), producer) }
                    if state.ended { return (state.takeFailure().map { .failure($0) } ?? .success(nil), nil) }
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

    /// For a polling reader: the next event, ``WatchFeedItem/waiting`` (after which the reader is
    /// woken when there is more), or the end.
    func poll() -> WatchFeedItem {
        let (item, producer) = state.withLock { state -> (WatchFeedItem, CheckedContinuation<Void, Never>?) in
            if let (event, producer) = state.takeFirst(limit: limit) { return (.event(event), producer) }
            if state.ended { return (.ended(state.takeFailure()), nil) }
            state.woken = false
            return (.waiting, nil)
        }
        producer?.resume()
        return item
    }
}

extension WatchChannel.State {
    /// Dequeues the next event, with the replay task to resume if that made room for it.
    mutating func takeFirst(limit: Int) -> (ChangeEvent, CheckedContinuation<Void, Never>?)? {
        guard count > 0 else { return nil }
        let event = events[head]
        head += 1
        if head > 1024, head * 2 > events.count {
            events.removeFirst(head)
            head = 0
        }
        var resumed: CheckedContinuation<Void, Never>?
        if count < limit / 2 {
            resumed = producer
            producer = nil
        }
        return (event, resumed)
    }

    /// The error the channel ended with, given once.
    mutating func takeFailure() -> (any Error)? {
        defer { failure = nil }
        return failure
    }

    /// The polling reader's wake-up, if it is not already woken.
    mutating func wakeReader() -> (@Sendable () -> Void)? {
        guard let onReady, !woken else { return nil }
        woken = true
        return onReady
    }

    /// The polling reader's last wake-up, at the end: dropped from the channel, so that nothing
    /// the reader holds is kept alive by it.
    mutating func endReader() -> (@Sendable () -> Void)? {
        defer { onReady = nil }
        return onReady
    }
}
