import PrefsKit

/// What ``WatchFeed/poll()`` found.
package enum WatchFeedItem: Sendable {
    /// The next event.
    case event(ChangeEvent)
    /// Nothing yet: the feed calls its `onReady` (``WatchFeed/wakeWhenReady(_:)``) when there is.
    case waiting
    /// The watch has ended, with the error that ended it if any.
    case ended((any Error)?)
}
