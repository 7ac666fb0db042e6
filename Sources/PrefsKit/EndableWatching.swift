/// A ``PrefsService`` whose watches can be ended from outside, as the embedded store's can: the
/// daemon ends a watch the moment its client's connection closes, without a task per watch
/// waiting for that.
public protocol EndableWatching: PrefsService {
    /// ``PrefsService/openWatch(_:)``, and a closure that ends the stream (it finishes as if the
    /// watcher had stopped, and the subscription goes) — harmless once the stream has ended.
    func openEndableWatch(_ request: WatchRequest) async throws
        -> (events: AsyncThrowingStream<ChangeEvent, any Error>, end: @Sendable () -> Void)
}
