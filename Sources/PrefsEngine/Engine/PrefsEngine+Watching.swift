import CoreMetrics
import PrefsKit

extension PrefsEngine {
    /// Watches committed changes. With `since`, first replays every selected change after it
    /// from the change log, then goes live — nothing missed, nothing repeated.
    ///
    /// - Parameter request: What to watch, and from which revision.
    /// - Returns: The change events. A `since` older than the log's oldest revision ends the
    ///   stream with `compacted`, carrying the oldest revision, if compaction dropped a change
    ///   after it that the watch follows (any, for a watch of drafts); else the replay reads
    ///   them from the log, which kept them. A `since` newer than the store's newest revision
    ///   ends it with `invalid_request` naming that revision.
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
    ///
    /// A preference watch resumed from a revision older than the change log's oldest is not
    /// refused here: the log still holds every change it follows if compaction dropped none of
    /// them, which the replay finds out as it reads the log — the handle's feed opens then, or
    /// is refused with `compacted` (``WatchFeed/whenOpen(_:)``). A watch of drafts follows rows
    /// compaction drops without a record of them: from before the log, it is `compacted` at once.
    private func subscribe(_ request: WatchRequest) throws -> WatchHandle {
        for key in request.keys { try KeyName.validate(key) }
        let (current, oldest) = cache.read { ($0.revision, $0.oldestRevision) }
        let beforeTheLog = request.since.map { $0 < oldest - 1 } ?? false
        if let since = request.since, beforeTheLog, request.watchesDrafts {
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
        let opening = WatchOpening(open: !beforeTheLog)
        let subscription = try hub.subscribe(
            request, channel: channel, overrides: configuration.overrides, replaying: request.since != nil)
        if let since = request.since {
            Task {
                do {
                    if since > subscription.revision { try await waitUntilTakenIn(since) { PrefsError.ahead(since: since, newest: $0) } }
                    try await replay(request, after: since, through: subscription.revision, into: channel, opening: opening)
                    opening.open()
                    hub.goLive(subscription.id)
                } catch {
                    if (error as? PrefsError)?.code == .compacted { metrics.compacted.increment() }
                    opening.refuse(error)
                    channel.finish(throwing: error)
                    hub.unsubscribe(subscription.id)
                }
            }
        }
        return WatchHandle(hub: hub, id: subscription.id, channel: channel, opening: opening)
    }

    /// Sends the selected changes in (`since`, `through`] to `channel`, at the watcher's pace,
    /// opening `opening` once the log's first page is read and holds them.
    private func replay(
        _ request: WatchRequest, after since: Revision, through: Revision, into channel: WatchChannel, opening: WatchOpening
    ) async throws {
        guard since < through else { return }
        if request.scope == nil {
            var position = since
            while position < through, !channel.isEnded {
                let after = position
                let page = try await unbrokenChanges(after: after, through: through, limit: 1000, following: request)
                opening.open()
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
            let history = try await scopedHistory(request, after: since, through: through)
            opening.open()
            for change in history {
                if let event = WatchFilter.event(for: change, request: request, overrides: configuration.overrides) {
                    await channel.pushWhenRoom(event)
                }
            }
        }
    }

    /// The changes after `revision` up to `through`, in order, at most `limit` of them; throws
    /// `compacted` if the log no longer holds every change after `revision` that `request`
    /// follows.
    ///
    /// A log compacted past `revision` still holds all of those if compaction dropped none: the
    /// rows it keeps below its oldest revision are read with the others. What it dropped is read
    /// after the log, so a compaction that comes after the read of the log is seen.
    private func unbrokenChanges(after revision: Revision, through: Revision, limit: Int, following request: WatchRequest)
        async throws -> [LoggedChange]
    {
        let page = try await storage.changeLog(after: revision, through: through, limit: limit)
        if revision < page.oldestRevision - 1 {
            guard !request.watchesDrafts, try await newestCompactedAway(following: request) <= revision else {
                throw PrefsError.compacted(since: revision, oldest: page.oldestRevision)
            }
        }
        return page.changes
    }

    /// The newest revision compaction dropped among the changes `request`, a watch of
    /// preferences, follows: of its keys and prefixes (every key without either); at its scope,
    /// above it, or a schema's for a scoped watch (nothing else changes the effective value
    /// there); within its grant's reach for a watch a scoped token opened (a superset of what
    /// it may show).
    private func newestCompactedAway(following request: WatchRequest) async throws -> Revision {
        var filter = ChangeLogFilter()
        if let scope = request.scope {
            filter.scopes = scope.selfAndAncestors
        } else if let grant = request.grant, !grant.coversEverything {
            filter.reach = grant.scope
        }
        guard !request.keys.isEmpty || !request.prefixes.isEmpty else {
            return try await storage.newestCompactedAway(matching: filter)
        }
        var newest: Revision = 0
        for key in Set(request.keys) {
            filter.key = key
            newest = max(newest, try await storage.newestCompactedAway(matching: filter))
        }
        filter.key = nil
        for prefix in Set(request.prefixes) {
            filter.prefix = prefix
            newest = max(newest, try await storage.newestCompactedAway(matching: filter))
        }
        return newest
    }

    /// The selected changes in (`since`, `through`] with each key's state before and after
    /// them: the current states, walked back through the log to `since`, then forward again.
    private func scopedHistory(_ request: WatchRequest, after since: Revision, through: Revision) async throws
        -> [CommittedChange]
    {
        let (states, current) = cache.read { ($0.keys, $0.revision) }
        let log = try await unbrokenChanges(after: since, through: current, limit: Int.max, following: request)
            .filter { $0.event.key.map(request.selects(key:)) ?? false }
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
    let opening: WatchOpening

    init(hub: WatchHub, id: Int, channel: WatchChannel, opening: WatchOpening) {
        self.hub = hub
        self.id = id
        self.channel = channel
        self.opening = opening
    }

    var isOpen: Bool { opening.isOpen }

    func whenOpen(_ onOpen: @escaping @Sendable ((any Error)?) -> Void) {
        opening.whenOpen(onOpen)
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
