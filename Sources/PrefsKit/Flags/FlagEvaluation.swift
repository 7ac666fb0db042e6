/// A preference read as an OpenFeature flag (OFREP): the effective value at a scope, with
/// prefsd's explanation in OpenFeature's words.
///
/// - `reason`: `DEFAULT` for the schema's default; `STATIC` for a value set at `/` or an
///   override (the same for every context); `TARGETING_MATCH` for a value set at a deeper scope
///   (the context chose it). A locked key answers the reason of the value its lock pins — the
///   lock decides *that* the value holds below it, the value's own layer decides for whom — and
///   says it is locked in its variant and metadata.
/// - `variant`: the layer that won, as `source` names it (`scope:/tenants/acme`,
///   `lock:/tenants`, `default`, `override`).
/// - `metadata`: `source` (the same), `scope` (where the context read), and `revision`, that of
///   the entry that won (none for a default or an override): an answer changes only when what
///   it answers does, never with the store's other changes.
package struct FlagEvaluation: Sendable, Hashable {
    /// The flag's key.
    package var key: String
    /// Its effective value.
    package var value: JSONValue
    /// OpenFeature's reason.
    package var reason: String
    /// The layer that won.
    package var variant: String
    /// Where the context read.
    package var scope: ScopePath
    /// The revision of the entry that won; nil for a default or an override.
    package var revision: Revision?

    /// The evaluation of `key` at `scope` in `state` (with the daemon's `override`); nil when
    /// the key has no value there and no default: OFREP's `FLAG_NOT_FOUND`.
    package init?(key: String, at scope: ScopePath, state: KeyState, override: JSONValue?) {
        let (value, source) = PreferenceResolver.effectiveValue(at: scope, state: state, override: override)
        guard let value, source != .none else { return nil }
        self.key = key
        self.value = value
        self.scope = scope
        variant = source.description
        switch source {
        case .scope(let layer):
            reason = layer.isRoot ? "STATIC" : "TARGETING_MATCH"
            revision = state.values[layer]?.revision
        case .lock(let lockScope):
            let pinned = state.nearestValue(at: lockScope)
            reason = pinned.map { $0.scope.isRoot ? "STATIC" : "TARGETING_MATCH" } ?? "DEFAULT"
            revision = max(state.locks[lockScope] ?? 0, pinned?.stored.revision ?? 0)
        case .default:
            reason = "DEFAULT"
            revision = nil
        default:
            reason = "STATIC"
            revision = nil
        }
    }

    /// The evaluation as OFREP's JSON (`key`, `value`, `reason`, `variant`, `metadata`), written
    /// directly: the same bytes for the same answer.
    package var json: String {
        var metadata = #""scope":\#(JSONValue.string(scope.path).canonicalText),"source":\#(JSONValue.string(variant).canonicalText)"#
        if let revision { metadata = #""revision":\#(revision),"# + metadata }
        if variant.hasPrefix("lock:") { metadata = #""locked":true,"# + metadata }
        return #"{"key":\#(JSONValue.string(key).canonicalText),"metadata":{\#(metadata)},"reason":"\#(reason)","value":\#(value.canonicalText),"variant":\#(JSONValue.string(variant).canonicalText)}"#
    }
}
