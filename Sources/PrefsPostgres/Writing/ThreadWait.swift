#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One outcome the writer's thread waits for, ended by whichever comes first of what can end it:
/// PostgreSQL's answer, the connection's closing, a moment of the injected clock
/// (``ClockAlarm``). The thread blocks on a condition variable that the first ending signals: no
/// semaphore, no polling, and nothing measured on the wall clock.
final class ThreadWait<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `outcome` is read and written only with `mutex` locked; the mutex and the
    // condition are POSIX objects made to be shared between threads, allocated once, never moved.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ended = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var outcome: Result<Value, any Error>?

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ended, nil)
    }

    deinit {
        pthread_cond_destroy(ended)
        pthread_mutex_destroy(mutex)
        ended.deallocate()
        mutex.deallocate()
    }

    /// Ends the wait with `result`, unless it has ended.
    @Sendable func end(_ result: Result<Value, any Error>) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard outcome == nil else { return }
        outcome = result
        pthread_cond_signal(ended)
    }

    /// Blocks the calling thread — never an event loop's — until the wait has ended, and returns
    /// its outcome.
    func outcomeOnceEnded() throws -> Value {
        pthread_mutex_lock(mutex)
        while outcome == nil { pthread_cond_wait(ended, mutex) }
        let outcome = outcome!
        pthread_mutex_unlock(mutex)
        return try outcome.get()
    }
}
