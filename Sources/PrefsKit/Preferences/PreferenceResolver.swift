/// Resolves a key at a scope, environment-style; the first layer that holds a value wins:
///
/// 1. a volatile **override** given to the daemon;
/// 2. a **lock** at the scope or an ancestor — the highest one wins, and pins the value that
///    resolves at the lock's own scope (its value, else its ancestors', else the default);
/// 3. the value set at the **scope**, then its parent, … up to `/`;
/// 4. the schema **default**, else nothing (`source: none`, value `null`).
///
/// Pure: it reads only the `KeyState` it is given, so the store can run it on its in-memory
/// cache and tests can run it on hand-made states.
package enum PreferenceResolver {
    /// The effective value of `key` at `scope`, with its source; with `explain`, the whole chain.
    package static func resolve(
        key: String, at scope: ScopePath, state: KeyState?, override: JSONValue?, revision: Revision,
        explain: Bool = false
    ) -> ResolvedPreference {
        let state = state ?? KeyState()
        let (value, source) = effectiveValue(at: scope, state: state, override: override)
        return ResolvedPreference(
            key: key, scope: scope, value: value ?? .null, source: source, revision: revision,
            chain: explain ? chain(at: scope, state: state, override: override) : nil
        )
    }

    /// The effective value and its source, without building a ``ResolvedPreference``.
    package static func effectiveValue(
        at scope: ScopePath, state: KeyState, override: JSONValue?
    ) -> (value: JSONValue?, source: PreferenceSource) {
        if let override { return (override, .override) }
        if let lockScope = state.governingLock(at: scope) {
            return (state.nearestValue(at: lockScope)?.stored.value ?? state.schema?.defaultValue, .lock(lockScope))
        }
        if let (valueScope, stored) = state.nearestValue(at: scope) { return (stored.value, .scope(valueScope)) }
        if let defaultValue = state.schema?.defaultValue { return (defaultValue, .default) }
        return (nil, .none)
    }

    /// Every layer, in the order resolution consults them.
    private static func chain(at scope: ScopePath, state: KeyState, override: JSONValue?) -> [ChainLayer] {
        var layers: [ChainLayer] = []
        if let override { layers.append(ChainLayer(layer: .override, value: override, revision: nil)) }
        if let lockScope = state.governingLock(at: scope) {
            let pinned = state.nearestValue(at: lockScope)?.stored
            layers.append(
                ChainLayer(
                    layer: .lock(lockScope), value: pinned?.value ?? state.schema?.defaultValue,
                    revision: state.locks[lockScope]
                )
            )
        }
        for candidate in scope.selfAndAncestors {
            let stored = state.values[candidate]
            layers.append(ChainLayer(layer: .scope(candidate), value: stored?.value, revision: stored?.revision))
        }
        if let defaultValue = state.schema?.defaultValue {
            layers.append(ChainLayer(layer: .default, value: defaultValue, revision: nil))
        }
        return layers
    }
}
