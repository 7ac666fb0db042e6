import CoreMetrics
import PrefsKit

extension PrefsEngine {
    /// Watches committed changes. With `since`, first replays every selected change after it
    /// from the change log, then goes live — nothing missed, nothing repeated.
    ///
    /// - Parameter request: What to watch, and from which revision.
    /// - Returns: The change events. A `since` older than the log keeps ends the stream with
    ///   `compacted`, carrying the oldest revision; a `since` newer than the store's newest
    ///   revision, with `invalid_request` naming that revision.
    public func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error> {
        do {
            return try openStream(request)
        } catch {
            return AsyncThrowingStream { throw error }
        }
    }

    private func openStream(_ request: WatchRequest) throws -> AsyncThrowingStream<ChangeEvent, any Error> {
        Self.stream(of: try subscribe(request))
    }

    /// The watch's events as a stream that holds its handle: when the stream is dropped, the
    /// subscription goes.
    private static func stream(of handle: WatchHandle) -> AsyncThrowingStream<ChangeEvent, any Error> {
        AsyncThrowingStream(unfolding: { try await handle.channel.next() })
    }

    package func openWatchFeed(_ request: WatchRequest) throws -> any WatchFeed {
        try subscribe(request)
    }

    /// Subscribes `request` now, or throws why it cannot be. The subscription lasts as long as
    /// the handle (or until the handle's feed is ended).
    private func subscribe(_ request: WatchRequest) throws -> WatchHandle {
        for key in request.keys { try KeyName.validate(key) }
        let (current, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
        if let since = request.since, since < oldest - 1 {
            metrics.compacted.increment()
            throw PrefsError.compacted(since: since, oldest: oldest)
        }
        // With one writer, `current` is the newest revision committed to the database. A database
        // several hosts share may hold newer ones this host has not taken in yet: the replay waits
        // for them, and refuses only a revision the database does not have.
        if let since = request.since, since > current, !storage.hasOtherWriters {
            throw PrefsError.ahead(since: since, newest: current)
        }
        let channel = WatchChannel(
            limit: configuration.watchBufferLimit, revision: request.since ?? current, metrics: metrics)
        let subscription = try hub.subscribe(
            request, channel: channel, overrides: configuration.overrides, replaying: request.since != nil)
        if let since = request.since {
            Task {
                do {
                    if since > subscription.revision { try await waitUntilTakenIn(since) { PrefsError.ahead(since: since, newest: $0) } }
                    try await replay(request, after: since, through: subscription.revision, into: channel)
                    hub.goLive(subscription.id)
                } catch {
                    if (error as? PrefsError)?.code == .compacted { metrics.compacted.increment() }
                    channel.finish(throwing: error)
                    hub.unsubscribe(subscription.id)
                }
            }
        }
        return WatchHandle(hub: hub, id: subscription.id, channel: channel)
    }

    /// Sends the selected changes in (`since`, `through`] to `channel`, at the watcher's pace.
    private func replay(_ request: WatchRequest, after since: Revision, through: Revision, into channel: WatchChannel)
        async throws
    {
        let oldest = cache.read { $0.oldestRevision }
        guard since >= oldest - 1 else { throw PrefsError.compacted(since: since, oldest: oldest) }
        guard since < through else { return }
        if request.scope == nil {
            var position = since
            while position < through, !channel.isEnded {
                let after = position
                let page = try await unbrokenChanges(after: after, through: through, limit: 1000)
                guard let last = page.last else { break }
                for change in page {
                    let committed = CommittedChange(event: change.event, before: nil, after: nil)
                    if let event = WatchFilter.event(for: committed, request: request, overrides: [:]) {
                        await channel.pushWhenRoom(event)
                    }
                }
                position = last.event.revision
            }
        } else {
            for change in try await scopedHistory(request, after: since, through: through) {
                if let event = WatchFilter.event(for: change, request: request, overrides: configuration.overrides) {
                    await channel.pushWhenRoom(event)
                }
            }
        }
    }

    /// The changes after `revision` up to `through`, in order, at most `limit` of them; throws
    /// `compacted` if the log no longer holds every change after `revision`.
    private func unbrokenChanges(after revision: Revision, through: Revision, limit: Int) async throws -> [LoggedChange] {
        let page = try await storage.changeLog(after: revision, through: through, limit: limit)
        guard revision >= page.oldestRevision - 1 else {
            throw PrefsError.compacted(since: revision, oldest: page.oldestRevision)
        }
        return page.changes
    }

    /// The selected changes in (`since`, `through`] with each key's state before and after
    /// them: the current states, walked back through the log to `since`, then forward again.
    private func scopedHistory(_ request: WatchRequest, after since: Revision, through: Revision) async throws
        -> [CommittedChange]
    {
        let (states, current) = cache.read { ($0.keys, $0.revision) }
        let log = try await unbrokenChanges(after: since, through: current, limit: Int.max).filter { $0.event.key.map(request.selects(key:)) ?? false }
        var atRevision: [String: KeyState] = [:]
        for change in log.reversed() {
            let key = change.event.key!
            var state = atRevision[key] ?? states[key] ?? KeyState()
            try state.revert(change)
            atRevision[key] = state
        }
        var history: [CommittedChange] = []
        for change in log where change.event.revision <= through {
            let key = change.event.key!
            let before = atRevision[key] ?? KeyState()
            var after = before
            try after.apply(change.event)
            atRevision[key] = after
            history.append(CommittedChange(event: change.event, before: before, after: after))
        }
        return history
    }
}

/// Keeps a watch subscribed for as long as its stream or feed is in use: when the stream (and so
/// this handle) is released, or the feed is ended, the watch is removed from the hub.
private final class WatchHandle: WatchFeed {
    let hub: WatchHub
    let id: Int
    let channel: WatchChannel

    init(hub: WatchHub, id: Int, channel: WatchChannel) {
        self.hub = hub
        self.id = id
        self.channel = channel
    }

    func wakeWhenReady(_ onReady: @escaping @Sendable () -> Void) {
        channel.wakeWhenReady(onReady)
    }

    func poll() -> WatchFeedItem {
        channel.poll()
    }

    func end() {
        channel.finish()
        hub.unsubscribe(id)
    }

    deinit {
        end()
    }
}
