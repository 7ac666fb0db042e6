import PrefsKit

/// Preferences read as OpenFeature flags (the daemon's OFREP endpoints): from memory, as every
/// read.
extension PrefsEngine {
    /// `key` evaluated at `scope` (``FlagEvaluation``); nil when it has no value there and no
    /// default.
    package func evaluateFlag(_ key: String, at scope: ScopePath) -> FlagEvaluation? {
        FlagEvaluation(key: key, at: scope, state: cache.state(of: key) ?? KeyState(), override: configuration.overrides[key])
    }

    /// Every key starting with `prefix` (every key, without one) that has a value at `scope` or a
    /// default, evaluated there, in key order.
    package func evaluateFlags(prefix: String?, at scope: ScopePath) -> [FlagEvaluation] {
        let overrides = configuration.overrides
        return cache.read { snapshot in
            Set(snapshot.keys.keys).union(overrides.keys).filter { key in prefix.map(key.hasPrefix) ?? true }.sorted()
                .compactMap { key in
                    FlagEvaluation(key: key, at: scope, state: snapshot.keys[key] ?? KeyState(), override: overrides[key])
                }
        }
    }
}
