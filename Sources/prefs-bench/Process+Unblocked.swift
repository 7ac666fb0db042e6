#if canImport(Glibc)
import Glibc
#endif
import Foundation

extension Process {
    /// Starts the process with no signal blocked, as a shell starts a program. The benchmark's
    /// sections run as tasks, on threads of the concurrency pool, which block every signal, and
    /// a child inherits the mask of the thread that starts it: pgbench, whose `-T` ends on
    /// `SIGALRM`, would then run for ever.
    func runWithSignalsUnblocked() throws {
        var none = sigset_t()
        var saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try run()
    }
}
