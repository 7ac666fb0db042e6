import Foundation
import Synchronization

/// Faults a test can make happen inside a debug build, at a moment no signal can aim at: they
/// are compiled out of release builds, and read nowhere else.
///
/// `PREFSD_DEBUG_EXIT_AFTER_COMMITS=N` ends the process, as `kill -9` would, right after its
/// N-th batch has committed and before any of its requests is answered: what a client that sent
/// one must then find out.
enum DebugFaults {
    #if DEBUG
    /// The commits left before the process ends, if it is to.
    private static let commitsLeft = Mutex<Int?>(
        ProcessInfo.processInfo.environment["PREFSD_DEBUG_EXIT_AFTER_COMMITS"].flatMap(Int.init))
    /// The pushes left before the process ends as an answer arrives, if it is to.
    private static let pushesLeft = Mutex<Int?>(
        ProcessInfo.processInfo.environment["PREFSD_DEBUG_EXIT_AFTER_PUSHES"].flatMap(Int.init))
    #endif

    /// Called as each batch has committed, before its requests are answered.
    static func batchCommitted() {
        #if DEBUG
        let exits = commitsLeft.withLock { left -> Bool in
            guard let count = left else { return false }
            left = count - 1
            return count <= 1
        }
        if exits { _exit(137) }
        #endif
    }

    /// Called as a replica's push is answered, before the answer is taken in: a process that
    /// ends here has had its changes applied upstream without knowing it.
    static func pushAnswered() {
        #if DEBUG
        let exits = pushesLeft.withLock { left -> Bool in
            guard let count = left else { return false }
            left = count - 1
            return count <= 1
        }
        if exits { _exit(137) }
        #endif
    }
}
