/// What a key's entry at a scope holds when a device's change meets an upstream entry that
/// changed after the revision the change was based on: the key's ``MergeRule`` applied to the
/// two, with the value both started from.
///
/// A value of nil is no value (a reset). Pure: the upstream's sync applies it in the
/// transaction that takes the device's change in, and records the sides that lost.
public struct ConflictResolution: Sendable, Hashable {
    /// One of the two changes that met.
    public struct Side: Sendable, Hashable {
        /// The value it leaves (nil: none, a reset).
        public var value: JSONValue?
        /// When it was made.
        public var stamp: SyncStamp

        /// A side.
        public init(value: JSONValue?, stamp: SyncStamp) {
            self.value = value
            self.stamp = stamp
        }
    }

    /// Which change the resolved value is.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The upstream's entry stays as it is.
        case upstream
        /// The device's change is applied.
        case device
        /// Neither alone: a value made of both (``MergeRule/union``).
        case merged
    }

    /// The value the entry holds (nil: none).
    public var value: JSONValue?
    /// Which change that is.
    public var outcome: Outcome
    /// Whether the upstream's value lost: it differs from the resolved value.
    public var upstreamLost: Bool
    /// Whether the device's value lost: it differs from the resolved value.
    public var deviceLost: Bool

    /// Resolves the device's change `device` against the upstream's entry `upstream` by `rule`.
    ///
    /// - Parameters:
    ///   - rule: The key's rule.
    ///   - base: The value both started from: the entry at the revision the device's change was
    ///     based on (nil: none).
    ///   - upstream: The upstream's entry now, with the stamp of the change that made it.
    ///   - device: The device's change.
    public init(_ rule: MergeRule, base: JSONValue?, upstream: Side, device: Side) {
        let value: JSONValue?
        switch rule {
        case .lww:
            value = device.stamp > upstream.stamp ? device.value : upstream.value
        case .upstream:
            value = upstream.value
        case .max, .min:
            value = Self.extreme(rule, upstream, device)
        case .union:
            value = Self.union(base: base, upstream: upstream.value, device: device.value)
        }
        self.value = value
        upstreamLost = upstream.value != value
        deviceLost = device.value != value
        outcome =
            if !upstreamLost { .upstream } else if !deviceLost { .device } else { .merged }
    }

    /// The larger (`max`) or smaller (`min`) number; a value over none; by `lww` where the two
    /// are not both numbers.
    private static func extreme(_ rule: MergeRule, _ upstream: Side, _ device: Side) -> JSONValue? {
        guard let up = upstream.value else { return device.value }
        guard let down = device.value else { return up }
        guard let a = DecimalDigits(up), let b = DecimalDigits(down) else {
            return device.stamp > upstream.stamp ? down : up
        }
        if a == b { return device.stamp > upstream.stamp ? down : up }
        return (rule == .max) == (b > a) ? down : up
    }

    /// Arrays of strings as sets: what is in the base and both, and what either added; in the
    /// upstream's order, then the device's additions in its order. None (a reset) counts as
    /// empty, and an empty result from a reset stays none.
    private static func union(base: JSONValue?, upstream: JSONValue?, device: JSONValue?) -> JSONValue? {
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let elements) = value else { return [] }
            return elements.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        let (base, ups, downs) = (Set(strings(base)), strings(upstream), strings(device))
        let (upSet, downSet) = (Set(ups), Set(downs))
        let keep = { (element: String) in base.contains(element) ? upSet.contains(element) && downSet.contains(element) : true }
        var seen = Set<String>()
        let merged = (ups + downs).filter { keep($0) && seen.insert($0).inserted }
        if merged.isEmpty, upstream == nil || device == nil { return nil }
        return .array(merged.map(JSONValue.string))
    }
}
