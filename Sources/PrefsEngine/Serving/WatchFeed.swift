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

    /// Whether the watch is open: true for almost every watch as it is opened; false for one
    /// resumed from a revision older than the change log's oldest, until the engine has read the
    /// log and what compaction dropped (``whenOpen(_:)``).
    var isOpen: Bool { get }

    /// Calls `onOpen` once the watch is open, with nil — or with the error that refuses it
    /// (`compacted`: compaction dropped a change it follows), which a listener answers as a
    /// status rather than as an `error` event after a `200`. From any thread, possibly before
    /// this returns.
    func whenOpen(_ onOpen: @escaping @Sendable ((any Error)?) -> Void)
}

extension WatchFeed {
    /// Open as it is opened.
    package var isOpen: Bool { true }

    /// Open at once.
    package func whenOpen(_ onOpen: @escaping @Sendable ((any Error)?) -> Void) {
        onOpen(nil)
    }
}
