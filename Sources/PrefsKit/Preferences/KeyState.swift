
/// Everything the store holds for one key: the values set at scopes, the locks, the schema.
///
/// The store keeps one per key in memory; resolution and the write rules are pure functions of
/// it, so a read costs no SQL.
package struct KeyState: Sendable, Hashable {
    /// The values set for this key, by scope.
    package var values: [ScopePath: StoredValue] = [:]
    /// The scopes this key is locked at, with the revision that locked it.
    package var locks: [ScopePath: Revision] = [:]
    /// The key's schema, if one is registered.
    package var schema: PreferenceSchema?

    /// A key's state from its values, locks and schema.
    package init(values: [ScopePath: StoredValue] = [:], locks: [ScopePath: Revision] = [:], schema: PreferenceSchema? = nil) {
        self.values = values
        self.locks = locks
        self.schema = schema
    }

    /// Whether nothing is stored for the key (it can be forgotten).
    package var isEmpty: Bool { values.isEmpty && locks.isEmpty && schema == nil }

    /// The key's revision at `scope`, which conditional writes (`ifRevision`, HTTP `If-Match`)
    /// compare and a read's `ETag` gives: the newest of the revision that set its value there and
    /// the one that locked it there; 0 when it has neither there (what a reset or an unlock
    /// leaves), so `ifRevision: 0` means "only if nothing is set or locked here".
    package func revision(at scope: ScopePath) -> Revision {
        max(values[scope]?.revision ?? 0, locks[scope] ?? 0)
    }

    /// The highest scope at or above `scope` that locks this key: the lock that governs `scope`.
    package func governingLock(at scope: ScopePath) -> ScopePath? {
        guard !locks.isEmpty else { return nil }
        return scope.selfAndAncestors.last { locks[$0] != nil }
    }

    /// The nearest value at `scope` or above, ignoring locks: what a lock at `scope` pins.
    package func nearestValue(at scope: ScopePath) -> (scope: ScopePath, stored: StoredValue)? {
        guard !values.isEmpty else { return nil }
        for candidate in scope.selfAndAncestors {
            if let stored = values[candidate] { return (candidate, stored) }
        }
        return nil
    }
}
