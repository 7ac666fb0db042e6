/// How a key's conflicting changes from two devices are resolved, as its schema names it
/// (`"merge"` in a schema file, ``PreferenceKey/merge`` in Swift).
///
/// A device's change conflicts when the key's entry at its scope changed on the upstream after
/// the revision the device's change was based on. The rule decides what the entry holds then;
/// whatever loses is kept as a conflict's loser, never dropped.
public enum MergeRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// The later change wins, by hybrid-logical-clock stamp (``SyncStamp``), ties by device
    /// name: the default.
    case lww
    /// The larger number wins (`int`, `double` keys); a reset loses to any value.
    case max
    /// The smaller number wins (`int`, `double` keys); a reset loses to any value.
    case min
    /// Arrays of strings as sets: what either side added since the base is in, what either side
    /// removed is out (`array` keys).
    case union
    /// The upstream's value stays; the device's change is the loser.
    case upstream

    /// The rule where a schema names none.
    public static let `default` = MergeRule.lww

    /// Whether the rule can apply to values of `type`; nil when it can, else why not.
    func unfit(for type: PreferenceSchema.ValueType) -> String? {
        switch self {
        case .lww, .upstream: nil
        case .max, .min: type == .int || type == .double ? nil : "applies to int and double"
        case .union: type == .array ? nil : "applies to array"
        }
    }
}
