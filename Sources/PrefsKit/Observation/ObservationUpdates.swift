import Observation

/// What `read` returns now, then again after each change Observation reports for what it reads:
/// the `updates` of every wrapper. Re-tracking happens inside the change callback, so no change
/// between two values is missed.
func observationUpdates<Value: Sendable>(of read: @escaping @Sendable () -> Value) -> AsyncStream<Value> {
    AsyncStream { continuation in
        @Sendable func track() {
            continuation.yield(withObservationTracking(read) { track() })
        }
        track()
    }
}
