import GRDB
import PrefsKit

extension EmbeddedStore {
    /// Watches committed changes. With `since`, first replays every selected change after it
    /// from the change log, then goes live — nothing missed, nothing repeated. `since` older
    /// than the log keeps ends the stream with `compacted`, carrying the oldest revision.
    public func watch(_ request: WatchRequest) -> AsyncThrowingStream<ChangeEvent, any Error> {
        do {
            return try subscribe(request).events
        } catch {
            return AsyncThrowingStream { throw error }
        }
    }

    public func openWatch(_ request: WatchRequest) async throws -> AsyncThrowingStream<ChangeEvent, any Error> {
        try subscribe(request).events
    }

    public func openEndableWatch(_ request: WatchRequest) async throws
        -> (events: AsyncThrowingStream<ChangeEvent, any Error>, end: @Sendable () -> Void)
    {
        try subscribe(request)
    }

    /// Subscribes `request` now, or throws why it cannot be: the stream, and what ends it.
    private func subscribe(_ request: WatchRequest) throws
        -> (events: AsyncThrowingStream<ChangeEvent, any Error>, end: @Sendable () -> Void)
    {
        for key in request.keys { try KeyName.validate(key) }
        let (current, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
        if let since = request.since, since < oldest - 1 { throw PrefsError.compacted(since: since, oldest: oldest) }
        let channel = WatchChannel(limit: configuration.watchBufferLimit, revision: request.since ?? current)
        let subscription = try hub.subscribe(
            request, channel: channel, overrides: configuration.overrides, replaying: request.since != nil)
        let handle = WatchHandle(hub: hub, id: subscription.id, channel: channel)
        if let since = request.since {
            Task {
                do {
                    try await replay(request, after: since, through: subscription.revision, into: channel)
                    hub.goLive(subscription.id)
                } catch {
                    channel.finish(throwing: error)
                    hub.unsubscribe(subscription.id)
                }
            }
        }
        // The stream holds the handle: when it is dropped, the subscription goes. `end` holds
        // only the channel, so it keeps nothing alive.
        return (AsyncThrowingStream(unfolding: { try await handle.channel.next() }), { [channel] in channel.finish() })
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
                let page = try await pool.read { db in
                    try ChangeLog.unbrokenChanges(db, after: after, through: through, limit: 1000)
                }
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

    /// The selected changes in (`since`, `through`] with each key's state before and after
    /// them: the current states, walked back through the log to `since`, then forward again.
    private func scopedHistory(_ request: WatchRequest, after since: Revision, through: Revision) async throws
        -> [CommittedChange]
    {
        let (states, current) = cache.read { ($0.keys, $0.revision) }
        let log = try await pool.read { db in
            try ChangeLog.unbrokenChanges(db, after: since, through: current, limit: Int.max)
        }.filter { $0.event.key.map(request.selects(key:)) ?? false }
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

/// Keeps a watch subscribed for as long as its stream is in use: when the stream (and so this
/// handle) is released, the watch is removed from the hub.
private final class WatchHandle: Sendable {
    let hub: WatchHub
    let id: Int
    let channel: WatchChannel

    init(hub: WatchHub, id: Int, channel: WatchChannel) {
        self.hub = hub
        self.id = id
        self.channel = channel
    }

    deinit {
        channel.finish()
        hub.unsubscribe(id)
    }
}
