import PrefsKit

/// A watch read by polling rather than by a task: the daemon's event loop writes a watch's
/// events to its connection as they come, with no task per watch waiting on a stream.
///
/// Set ``wakeWhenReady(_:)``, then poll until ``WatchFeedItem/waiting``; the feed then calls
/// `onReady` once it has something again (an event, or its end).
package protocol WatchFeed: AnyObject, Sendable {
    /// `onReady` is called, from any thread, whenever the feed has something after a poll found
    /// it waiting. It may be called while the engine holds its locks: hop elsewhere (to an event
    /// loop) to poll or end the feed, never from within the call. Set it before the first poll.
    func wakeWhenReady(_ onReady: @escaping @Sendable () -> Void)

    /// The next event, ``WatchFeedItem/waiting`` when there is none yet, or the end.
    func poll() -> WatchFeedItem

    /// Ends the watch: the subscription goes, and ``poll()`` gives what was queued, then the
    /// end. Harmless once the feed has ended.
    func end()
}
