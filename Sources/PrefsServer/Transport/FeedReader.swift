import PrefsEngine
import Synchronization

/// A watch feed read by a task: the next item, waiting for the feed to have one. For watches the
/// router streams (``HummingbirdResponder``); the raw-bytes path polls its feeds from the event
/// loop instead.
final class FeedReader: Sendable {
    private let feed: any WatchFeed
    /// The task waiting for the feed, and whether the feed woke while none was.
    private let waiting = Mutex<(continuation: CheckedContinuation<Void, Never>?, woken: Bool)>((nil, false))

    init(_ feed: any WatchFeed) {
        self.feed = feed
        feed.wakeWhenReady { [weak self] in self?.wake() }
    }

    /// The next event or the end, waiting while the feed has neither.
    func next() async -> WatchFeedItem {
        while true {
            let item = feed.poll()
            guard case .waiting = item else { return item }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = waiting.withLock { state in
                    if state.woken {
                        state.woken = false
                        return true
                    }
                    state.continuation = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Ends the watch.
    func end() {
        feed.end()
    }

    private func wake() {
        let continuation = waiting.withLock { state in
            defer { state.continuation = nil }
            if state.continuation == nil { state.woken = true }
            return state.continuation
        }
        continuation?.resume()
    }
}
