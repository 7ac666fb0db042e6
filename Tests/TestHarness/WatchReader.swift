import PrefsKit

/// Reads a watch's events in the test's own task: the one way the tests collect what a watch
/// saw, whether the watch is an engine's, a client's or a wrapper's.
///
/// A stream that ends before what was asked for has come gives what it had: the comparison the
/// test makes next then fails, naming what is missing.
public struct WatchReader {
    private var iterator: AsyncThrowingStream<ChangeEvent, any Error>.AsyncIterator
    private let skipsNotices: Bool

    /// A reader of `stream`; with `skippingNotices`, `progress`, `overflow` and `shutdown`
    /// events are passed over (they come at times of the daemon's choosing).
    public init(_ stream: AsyncThrowingStream<ChangeEvent, any Error>, skippingNotices: Bool = false) {
        iterator = stream.makeAsyncIterator()
        skipsNotices = skippingNotices
    }

    /// The next event, or nil at the end of the stream.
    public mutating func next() async throws -> ChangeEvent? {
        while let event = try await iterator.next() {
            if skipsNotices && event.kind.isNotice { continue }
            return event
        }
        return nil
    }

    /// The next `count` events.
    public mutating func take(_ count: Int) async throws -> [ChangeEvent] {
        var events: [ChangeEvent] = []
        while events.count < count, let event = try await next() { events.append(event) }
        return events
    }

    /// Every event up to and including the first one at `revision` (or later).
    public mutating func through(revision: Revision) async throws -> [ChangeEvent] {
        var events: [ChangeEvent] = []
        while let event = try await next() {
            events.append(event)
            if event.revision >= revision { break }
        }
        return events
    }

    /// Every remaining event until the stream ends, and the error it ended with, if any.
    public mutating func rest() async -> (events: [ChangeEvent], error: (any Error)?) {
        var events: [ChangeEvent] = []
        do {
            while let event = try await next() { events.append(event) }
            return (events, nil)
        } catch {
            return (events, error)
        }
    }
}

/// The first `count` changes `events` gives, notices passed over.
public func collect(_ events: AsyncThrowingStream<ChangeEvent, any Error>, count: Int) async throws -> [ChangeEvent] {
    var reader = WatchReader(events, skippingNotices: true)
    return try await reader.take(count)
}

/// The changes `events` gives up to and including the first at `revision` (or later), notices
/// passed over.
public func collect(_ events: AsyncThrowingStream<ChangeEvent, any Error>, through revision: Revision) async throws
    -> [ChangeEvent]
{
    var reader = WatchReader(events, skippingNotices: true)
    return try await reader.through(revision: revision)
}
