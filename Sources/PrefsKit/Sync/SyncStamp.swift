/// When a device made a change, by a hybrid logical clock: the device's physical time in
/// milliseconds, a counter that orders changes within one millisecond (or after the clock went
/// back), and the device's name, which breaks ties.
///
/// Stamps order changes as causality does — a device that has seen a stamp always stamps later —
/// and stay close to physical time. Compared field by field, in that order.
public struct SyncStamp: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
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

    /// `MILLISECONDS.COUNTER@DEVICE`: how a stamp is written on the wire and in a database.
    public var description: String { "\(milliseconds).\(counter)@\(device)" }

    /// The stamp written `MILLISECONDS.COUNTER@DEVICE` (the device may be empty); nil for any
    /// other text.
    public init?(_ description: String) {
        guard let dot = description.firstIndex(of: "."), let at = description[dot...].firstIndex(of: "@"),
            let milliseconds = Int64(description[..<dot]),
            let counter = UInt32(description[description.index(after: dot)..<at])
        else { return nil }
        self.init(milliseconds: milliseconds, counter: counter, device: String(description[description.index(after: at)...]))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let stamp = SyncStamp(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "A stamp is MILLISECONDS.COUNTER@DEVICE, not '\(text)'.")
        }
        self = stamp
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

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
