import Foundation
import Synchronization

/// A program a test starts: spawned with `posix_spawn`, with every descriptor but its standard
/// three closed in it, and reaped by a thread of its own.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` copying 256 bytes of
/// each entry however short it is, and now and then reads past the end of a page and crashes a
/// process with many descriptors open — as a parallel test run is (fixed upstream by
/// swift-corelibs-foundation#5472, after the toolchain this project builds with).
public final class ChildProcess: Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream {
        /// `/dev/null`.
        case null
        /// This descriptor of the test's, which stays the test's to close.
        case descriptor(Int32)
        /// The test's own stream of the same number.
        case inherited
    }

    /// The child's process ID.
    public let processIdentifier: pid_t
    /// Its exit status once it has ended — its code, or the signal that ended it — and the
    /// tasks waiting for it.
    private let state = Mutex<(status: Int32?, waiting: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Spawns `executable` with `arguments`, in `environment` (the test's own if nil).
    ///
    /// - Throws: `POSIXError` if it cannot be spawned.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .inherited
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (number, stream) in [standardInput, standardOutput, standardError].enumerated() {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, Int32(number), "/dev/null", number == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(number))
            case .inherited:
                break
            }
        }
        _ = Self.closeFrom?(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let environment = environment ?? ProcessInfo.processInfo.environment
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var spawned: pid_t = 0
        let failure = posix_spawn(&spawned, executable, &actions, nil, argv, envp)
        guard failure == 0 else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EINVAL) }
        let pid = spawned
        processIdentifier = pid
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            // Exited: its code; ended by a signal: the signal's number (as Foundation's Process).
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            let waiting = state.withLock { state in
                state.status = code
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume(returning: code) }
        }.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare: the child closes every descriptor from the one given, whoever
    /// opened it — none of the test's files, pipes and sockets outlives it in another program.
    private static let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Whether the child has not ended yet.
    public var isRunning: Bool { state.withLock { $0.status == nil } }

    /// The child's exit status once it has ended: its code, or the signal that ended it.
    public var exitStatus: Int32? { state.withLock { $0.status } }

    /// Sends `signal` (SIGTERM unless told otherwise) to the child if it still runs; returns
    /// whether it did.
    @discardableResult
    public func send(_ signal: Int32 = SIGTERM) -> Bool {
        isRunning && kill(processIdentifier, signal) == 0
    }

    /// Returns the exit status once the child has ended.
    public func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state in
                if state.status == nil { state.waiting.append(continuation) }
                return state.status
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Sends `signal` (SIGTERM unless told otherwise) if the child still runs, then returns its
    /// exit status once it has ended. A child still running after `patience` is killed (its
    /// status is then `SIGKILL`'s number, which no clean stop has): a stop that hangs fails the
    /// test that waits for it instead of holding the whole run.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, patience: Duration = .seconds(60)) async -> Int32 {
        send(signal)
        let killer = Task { [self] in
            try await Task.sleep(for: patience)
            send(SIGKILL)
        }
        defer { killer.cancel() }
        return await waitForExit()
    }
}
