/// A device's hybrid logical clock (Kulkarni et al., 2014): stamps that follow physical time
/// where it moves forward, and never go back when it does not — a clock set back, or a stamp
/// taken in from a device whose clock is ahead.
///
/// A value: its owner keeps it (and stores its ``latest`` stamp, so that a restart never stamps
/// earlier), and passes the physical time in, so that it is tested with any clock.
public struct HybridLogicalClock: Sendable, Hashable {
    /// The device whose stamps these are.
    public let device: String
    /// The latest stamp made or taken in: the next one is later.
    public private(set) var latest: SyncStamp

    /// A clock for `device` that stamps after `latest` (a stored stamp; none for a new device).
    public init(device: String, after latest: SyncStamp? = nil) {
        self.device = device
        self.latest = SyncStamp(milliseconds: latest?.milliseconds ?? 0, counter: latest?.counter ?? 0, device: device)
    }

    /// A stamp for a change made now: the physical time if it is later than every stamp so
    /// far, else the latest stamp's time with the next counter.
    ///
    /// - Parameter now: The physical time, in milliseconds since 1970.
    public mutating func stamp(now: Int64) -> SyncStamp {
        latest =
            now > latest.milliseconds
            ? SyncStamp(milliseconds: now, counter: 0, device: device)
            : SyncStamp(milliseconds: latest.milliseconds, counter: latest.counter &+ 1, device: device)
        return latest
    }

    /// Takes in a stamp seen from elsewhere (a pulled change), so that every later stamp of this
    /// clock is later than it.
    ///
    /// - Parameters:
    ///   - seen: The other stamp.
    ///   - now: The physical time, in milliseconds since 1970.
    public mutating func receive(_ seen: SyncStamp, now: Int64) {
        let milliseconds = Swift.max(now, latest.milliseconds, seen.milliseconds)
        let counter: UInt32 =
            switch (milliseconds == latest.milliseconds, milliseconds == seen.milliseconds) {
            case (true, true): Swift.max(latest.counter, seen.counter) &+ 1
            case (true, false): latest.counter &+ 1
            case (false, true): seen.counter &+ 1
            case (false, false): 0
            }
        latest = SyncStamp(milliseconds: milliseconds, counter: counter, device: device)
    }
}
