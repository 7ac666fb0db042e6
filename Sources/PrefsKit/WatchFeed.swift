/// A watch read by polling rather than by a task: the daemon's event loop writes a watch's
/// events to its connection as they come, with no task per watch waiting on a stream.
///
/// Poll until ``WatchFeedItem/waiting``; the feed then calls the `onReady` it was opened with
/// once it has something again (an event, or its end).
public protocol WatchFeed: AnyObject, Sendable {
    /// The next event, ``WatchFeedItem/waiting`` when there is none yet, or the end.
    func poll() -> WatchFeedItem

    /// Ends the watch: the subscription goes, and ``poll()`` gives what was queued, then the
    /// end. Harmless once the feed has ended.
    func end()
}

/// What ``WatchFeed/poll()`` found.
public enum WatchFeedItem: Sendable {
    /// The next event.
    case event(ChangeEvent)
    /// Nothing yet: the feed calls its `onReady` when there is.
    case waiting
    /// The watch has ended, with the error that ended it if any.
    case ended((any Error)?)
}

/// A ``PrefsService`` whose watches can be read as a ``WatchFeed``, as the embedded store's can.
public protocol FeedWatching: PrefsService {
    /// Subscribes `request` now, or throws why it cannot be (as ``PrefsService/openWatch(_:)``
    /// does). `onReady` is called, from any thread, whenever the feed has something after a
    /// poll found it waiting. It may be called while the store holds its locks: hop elsewhere
    /// (to an event loop) to poll or end the feed, never from within the call.
    func openWatchFeed(_ request: WatchRequest, onReady: @escaping @Sendable () -> Void) throws -> any WatchFeed
}
