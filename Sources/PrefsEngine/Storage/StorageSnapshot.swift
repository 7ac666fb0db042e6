import PrefsKit

/// What a storage holds that the engine keeps in memory: every key's state, and where the
/// change log stands.
package struct StorageSnapshot: Sendable {
    /// Each key's values, locks and schema.
    package var keys: [String: KeyState]
    /// The newest revision committed.
    package var newestRevision: Revision
    /// The oldest revision the change log still holds.
    package var oldestRevision: Revision
    /// The named tokens.
    package var tokens: [StoredToken]
    /// What the store keeps as a replica of an upstream (nothing, for one that never synced).
    package var replica: ReplicaSnapshot

    /// A snapshot of `keys` and `tokens` as of `newestRevision`, with the log starting at
    /// `oldestRevision`.
    package init(
        keys: [String: KeyState], newestRevision: Revision, oldestRevision: Revision, tokens: [StoredToken] = [],
        replica: ReplicaSnapshot = ReplicaSnapshot()
    ) {
        self.keys = keys
        self.newestRevision = newestRevision
        self.oldestRevision = oldestRevision
        self.tokens = tokens
        self.replica = replica
    }
}

extension StorageSnapshot {
    /// Gathers a snapshot from a storage's rows: values (fastest in key order), then locks and
    /// schemas in any order.
    package struct Builder {
        private var keys: [String: KeyState] = [:]
        private var tokens: [StoredToken] = []
        /// What the store keeps as a replica.
        package var replica = ReplicaSnapshot()
        /// The key whose values are being gathered, while values come in key order: they are
        /// stored once, rather than the key's state being looked up and copied for every row.
        private var gathering: (key: String, values: [ScopePath: StoredValue])?

        /// A builder expecting about `keyCount` keys.
        package init(keyCount: Int = 0) {
            // At most one key per row: sized once, the dictionary is not rehashed as it grows.
            keys.reserveCapacity(keyCount)
        }

        /// Adds a stored value.
        package mutating func addValue(key: String, scope: ScopePath, value: JSONValue, revision: Revision) {
            let stored = StoredValue(value: value, revision: revision)
            if gathering?.key == key {
                gathering!.values[scope] = stored
                return
            }
            flush()
            gathering = (key, keys[key]?.values ?? [:])
            gathering!.values[scope] = stored
        }

        /// Adds a lock.
        package mutating func addLock(key: String, scope: ScopePath, revision: Revision) {
            flush()
            keys[key, default: KeyState()].locks[scope] = revision
        }

        /// Adds a schema.
        package mutating func addSchema(key: String, schema: PreferenceSchema) {
            flush()
            keys[key, default: KeyState()].schema = schema
        }

        /// Adds a named token.
        package mutating func addToken(_ token: StoredToken) {
            tokens.append(token)
        }

        /// The snapshot of what was added, as of `newestRevision`, the log starting at `oldestRevision`.
        package mutating func snapshot(newestRevision: Revision, oldestRevision: Revision) -> StorageSnapshot {
            flush()
            return StorageSnapshot(
                keys: keys, newestRevision: newestRevision, oldestRevision: oldestRevision, tokens: tokens, replica: replica)
        }

        private mutating func flush() {
            guard let (key, values) = gathering else { return }
            gathering = nil
            keys[key, default: KeyState()].values = values
        }
    }
}
