/// When a device made a change, by a hybrid logical clock: the device's physical time in
/// milliseconds, a counter that orders changes within one millisecond (or after the clock went
/// back), and the device's name, which breaks ties.
///
/// Stamps order changes as causality does — a device that has seen a stamp always stamps later —
/// and stay close to physical time. Compared field by field, in that order.
public struct SyncStamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970, as the stamping device's clock read them (or later: see
    /// ``HybridLogicalClock``).
    public var milliseconds: Int64
    /// Orders stamps of the same millisecond.
    public var counter: UInt32
    /// The device that stamped it: its token's name.
    public var device: String

    /// A stamp.
    public init(milliseconds: Int64, counter: UInt32, device: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.device = device
    }

    public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        (lhs.milliseconds, lhs.counter, lhs.device) < (rhs.milliseconds, rhs.counter, rhs.device)
    }

    /// `MILLISECONDS.COUNTER@DEVICE`.
    public var description: String { "\(milliseconds).\(counter)@\(device)" }

    /// The stamp no later than `limit`'s physical time: a device whose clock runs ahead does not
    /// win every conflict for as long as it does. An upstream clamps each stamp it takes in to
    /// its own time plus the skew it tolerates; the device and the counter stay.
    ///
    /// - Parameter limit: The latest physical time accepted, in milliseconds since 1970.
    /// - Returns: This stamp, or one at `limit` if it was later.
    public func clamped(toAtMost limit: Int64) -> SyncStamp {
        milliseconds <= limit ? self : SyncStamp(milliseconds: limit, counter: counter, device: device)
    }
}
