import Configuration
import PrefsKit

/// The effective values at a provider's scope at one moment: what ``PrefsConfigProvider``'s
/// `snapshot()` and `watchSnapshot` give. Reads never change, whatever prefsd does after.
public struct PrefsConfigSnapshot: ConfigSnapshot {
    /// The name of the provider that took it.
    public let providerName: String
    /// The scope the values are effective at.
    public let scope: ScopePath
    /// The effective values, by prefsd key: the keys that have one.
    public let values: [String: ResolvedPreference]

    /// The value of `key` as `type`.
    ///
    /// - Parameters:
    ///   - key: The config key; its components joined with `.` name the prefsd key.
    ///   - type: The type to give the value as.
    /// - Returns: The value, or none when the key has none.
    /// - Throws: ``PrefsError`` — `invalid_value` when the value does not map to `type`.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = PrefsConfigProvider.prefsKey(key)
        return LookupResult(encodedKey: name, value: try values[name]?.configValue(as: type))
    }
}
