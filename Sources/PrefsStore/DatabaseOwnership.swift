#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import PrefsKit
import Synchronization

/// An exclusive claim on a database: one prefsd (or one `EmbeddedStore`) per database file.
///
/// The claim is an `flock` on `DATABASE.lock`, which also records the owner's pid for the
/// message a second opener gets. The kernel drops the lock when the owner exits, even by
/// `kill -9`, so a crash never leaves the database claimed.
final class DatabaseOwnership: Sendable {
    /// The lock file's path.
    let path: String
    /// The lock file's descriptor while the claim is held; nil once released.
    private let descriptor: Mutex<Int32?>

    /// How long a claim recorded under this process's own pid is waited for before `conflict`.
    static let releaseGrace = Duration.milliseconds(500)

    /// How long the claimant pauses between tries while its own pid's claim lingers.
    static let pauseBetweenTries = Duration.milliseconds(5)

    /// Sleeps for ``pauseBetweenTries``.
    static func sleepBetweenTries() {
        usleep(useconds_t(pauseBetweenTries / .microseconds(1)))
    }

    /// Claims the database at `databasePath`, or throws `conflict` naming the owner's pid.
    /// While a claim under this process's own pid lingers, `pause` is called between tries
    /// (each counting ``pauseBetweenTries`` toward ``releaseGrace``); it sleeps by default.
    init(databasePath: String, pause: () -> Void = DatabaseOwnership.sleepBetweenTries) throws {
        path = databasePath + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PrefsError(.unavailable, "Cannot open the lock file \(path): \(String(cString: strerror(errno))).")
        }
        var waited = Duration.zero
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let owner = Self.readPid(descriptor)
            // A claim this process has just given up can outlive its release for a moment: a
            // child being spawned meanwhile holds a copy of the descriptor until it execs. Such
            // a claim is waited for, briefly; another process's is refused at once.
            if owner == getpid(), waited < Self.releaseGrace {
                pause()
                waited += Self.pauseBetweenTries
                continue
            }
            close(descriptor)
            throw PrefsError(
                .conflict,
                "The database \(databasePath) is already in use by another prefsd or EmbeddedStore"
                    + (owner.map { " (pid \($0))" } ?? "")
                    + ". Stop it first, or use another database with --db."
            )
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        self.descriptor = Mutex(descriptor)
    }

    /// Gives the database up. Closing the descriptor releases the flock; the file stays (removing
    /// it could race with the next owner's open).
    func release() {
        descriptor.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    deinit {
        release()
    }

    private static func readPid(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self).trimmingWhitespace
        return Int32(text)
    }
}

extension String {
    /// Without leading and trailing spaces and newlines.
    var trimmingWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
